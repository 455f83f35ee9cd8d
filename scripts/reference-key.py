#!/usr/bin/env python3
"""Independent reference implementation of the tapedeck request key (spec version 2).

Written from docs/hash-spec.md alone ("canonical(v)", "digest(v)", "Message hashes and path
hashes", "Request key and signature"), in Python with the standard library only, so that the
TypeScript implementation can be checked against something that shares none of its code.

    python3 scripts/reference-key.py                 # writes test/vectors/request-keys.json
    python3 scripts/reference-key.py --out FILE      # writes elsewhere (the test compares)

Values: JSON numbers are IEEE doubles (Python float); objects are dicts in member order.
"""
import base64
import hashlib
import json
import math
import os
import re
import sys
from urllib.parse import parse_qsl, unquote, unquote_to_bytes

MAX_DEPTH = 512


class KeyError_(Exception):
    def __init__(self, code, path=None):
        super().__init__(code)
        self.code = code
        self.path = path


# ---------------------------------------------------------------------------------------------
# canonical(v): RFC 8785

def es_number(x):
    """ECMAScript Number.prototype.toString for a finite double."""
    if x != x or x in (math.inf, -math.inf):
        raise KeyError_('E_NON_FINITE')
    if x == 0:
        return '0'
    if x < 0:
        return '-' + es_number(-x)
    r = repr(x)  # shortest round-trip digits
    m = re.fullmatch(r'(\d+)(?:\.(\d+))?(?:e([+-]\d+))?', r)
    ip, fp, ex = m.group(1), m.group(2) or '', int(m.group(3) or 0)
    digits = (ip + fp).lstrip('0')
    lead_zeros = len(ip + fp) - len((ip + fp).lstrip('0'))
    n = len(ip) + ex - lead_zeros  # value = 0.digits * 10^n
    digits = digits.rstrip('0')
    k = len(digits)
    if k <= n <= 21:
        return digits + '0' * (n - k)
    if 0 < n <= 21:
        return digits[:n] + '.' + digits[n:]
    if -6 < n <= 0:
        return '0.' + '0' * (-n) + digits
    e = n - 1
    sign = '+' if e >= 0 else '-'
    mant = digits if k == 1 else digits[0] + '.' + digits[1:]
    return f'{mant}e{sign}{abs(e)}'


def has_lone_surrogate(s):
    return any(0xD800 <= ord(c) <= 0xDFFF for c in s)


def es_string(s):
    if has_lone_surrogate(s):
        raise KeyError_('E_LONE_SURROGATE')
    out = ['"']
    for c in s:
        o = ord(c)
        if c == '"':
            out.append('\\"')
        elif c == '\\':
            out.append('\\\\')
        elif c == '\b':
            out.append('\\b')
        elif c == '\t':
            out.append('\\t')
        elif c == '\n':
            out.append('\\n')
        elif c == '\f':
            out.append('\\f')
        elif c == '\r':
            out.append('\\r')
        elif o < 0x20:
            out.append('\\u%04x' % o)
        else:
            out.append(c)
    out.append('"')
    return ''.join(out)


def utf16_key(s):
    return s.encode('utf-16-be', 'surrogatepass')


def canonical_text(v, depth=0):
    if depth > MAX_DEPTH:
        raise KeyError_('E_DEPTH')
    if v is None:
        return 'null'
    if v is True:
        return 'true'
    if v is False:
        return 'false'
    if isinstance(v, (int, float)):
        return es_number(float(v))
    if isinstance(v, str):
        return es_string(v)
    if isinstance(v, list):
        return '[' + ','.join(canonical_text(x, depth + 1) for x in v) + ']'
    if isinstance(v, dict):
        keys = sorted(v.keys(), key=utf16_key)
        return '{' + ','.join(es_string(k) + ':' + canonical_text(v[k], depth + 1) for k in keys) + '}'
    raise KeyError_('E_TYPE')


def canonical(v):
    return canonical_text(v).encode('utf-8')


def digest(v):
    return hashlib.sha256(canonical(v)).hexdigest()


def sha_hex(b):
    return hashlib.sha256(b).hexdigest()


def path_hashes(items):
    ms = [digest(x) for x in items]
    ps = []
    for i, m in enumerate(ms):
        ps.append(m if i == 0 else sha_hex((ps[-1] + ':' + m).encode('ascii')))
    return ms, ps


# ---------------------------------------------------------------------------------------------
# Strict JSON text (I-JSON): duplicates, lone surrogates, overflow, depth

def _pairs(pairs):
    seen = set()
    out = {}
    for k, v in pairs:
        if k in seen:
            raise KeyError_('E_DUPLICATE_KEY')
        seen.add(k)
        out[k] = v
    return out


def _num(s):
    x = float(s)
    if x in (math.inf, -math.inf):
        raise KeyError_('E_NON_FINITE')
    return x


def _const(s):
    raise KeyError_('E_JSON')


def _check(v, depth=0):
    if depth > MAX_DEPTH:
        raise KeyError_('E_DEPTH')
    if isinstance(v, str):
        if has_lone_surrogate(v):
            raise KeyError_('E_LONE_SURROGATE')
    elif isinstance(v, list):
        for x in v:
            _check(x, depth + 1)
    elif isinstance(v, dict):
        for k, x in v.items():
            if has_lone_surrogate(k):
                raise KeyError_('E_LONE_SURROGATE')
            _check(x, depth + 1)


def strict_loads(text):
    """Parses I-JSON text; raises KeyError_ with the hash spec's code."""
    if isinstance(text, bytes):
        try:
            text = text.decode('utf-8')
        except UnicodeDecodeError:
            raise KeyError_('E_UTF8')
    try:
        v = json.loads(text, object_pairs_hook=_pairs, parse_float=_num, parse_int=_num, parse_constant=_const)
    except KeyError_:
        raise
    except (ValueError, RecursionError):
        raise KeyError_('E_JSON')
    _check(v)
    return v


# ---------------------------------------------------------------------------------------------
# The request view (docs/hash-spec.md, "Request key and signature")

DROPPED = {
    'user', 'metadata', 'store', 'service_tier', 'prompt_cache_key', 'prompt_cache_retention', 'safety_identifier',
    'api_key', 'apiKey', 'api_base', 'base_url', 'organization', 'timeout', 'request_timeout', 'request_id',
    'requestId', 'idempotency_key', 'timestamp', 'created', 'created_at', 'createdAt', 'headers', 'extra_headers',
    'extra_query', 'num_retries', 'max_retries', 'maxRetries', 'abortSignal',
    # OpenAI-compatible servers: model residency (LM Studio ttl, Ollama keep_alive), vLLM scheduling and cache placement.
    'ttl', 'keep_alive', 'priority', 'cache_salt', 'kv_transfer_params',
}
SHAPE_DEFAULTS = {
    'stream': False, 'background': False, 'n': 1.0, 'logprobs': False, 'encoding_format': 'float',
    'response_format': {'type': 'text'},
}
MESSAGE_NOISE = ['id', 'status', 'timestamp', 'created', 'created_at', 'createdAt', 'updated_at', 'updatedAt', 'request_id', 'requestId']
OPENAI_ARGS = [
    'functions', 'function_call', 'max_completion_tokens', 'response_format', 'n', 'logit_bias', 'logprobs', 'top_logprobs',
    'frequency_penalty', 'presence_penalty', 'reasoning_effort', 'modalities', 'audio', 'prediction', 'seed',
    'parallel_tool_calls', 'stream_options', 'web_search_options',
]
OPENAI_ROLES = {'system', 'developer', 'user', 'assistant', 'tool', 'function'}
LAYOUT = {
    'openai-chat': ['model', 'messages', 'system', 'tools', 'functions', 'context'],
    'anthropic': ['model', 'messages', 'system', 'tools', 'functions', 'context'],
    'openai-responses': ['model', 'input', 'instructions', 'tools', 'functions', 'context'],
    'generic': ['model', 'messages', 'prompt', 'system', 'tools', 'functions', 'context', 'options'],
    'openai-embeddings': ['model', 'input', 'options'],
}
PROVIDERS = ['openai-chat', 'openai-responses', 'openai-embeddings', 'anthropic', 'generic']


def is_obj(v):
    return isinstance(v, dict)


def is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def absent(v):
    return v is None or v == []  # null, or []


def jeq(a, b):
    """JavaScript === on JSON scalars (objects never equal)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if is_num(a) and is_num(b):
        return float(a) == float(b)
    if isinstance(a, str) and isinstance(b, str):
        return a == b
    return a is None and b is None


def rest(src, out, skip=()):
    for k, v in src.items():
        if k in out or k == 'cache_control' or k in skip:
            continue
        if not absent(v):
            out[k] = v
    return out


def keep(out, k, v):
    if not absent(v):
        out[k] = v


# Attachments ---------------------------------------------------------------------------------

B64 = re.compile(r'^[A-Za-z0-9+/_-]*={0,2}$')


def decode_b64(s):
    t = re.sub(r'[ \t\n\f\r]+', '', s)
    if not B64.match(t):
        return None
    core = t.rstrip('=')
    if len(core) % 4 == 1:
        return None
    core = core.replace('-', '+').replace('_', '/')
    # Bits that do not fill a byte are ignored: decode whole groups, then the tail.
    full = len(core) - len(core) % 4
    out = base64.b64decode(core[:full]) if full else b''
    tail = core[full:]
    if tail:
        vals = [base64.b64decode((tail + 'AAAA')[:4])]
        nbytes = {2: 1, 3: 2}[len(tail)]
        # Decode with zeroed filler, then keep only the bytes the tail fully determines.
        out += vals[0][:nbytes]
    return out


def media_type(v):
    if not isinstance(v, str):
        return None
    s = v.split(';')[0].strip().lower()
    return s or None


def from_bytes(b, mt):
    return {'sha256': sha_hex(b), 'mediaType': mt} if mt else {'sha256': sha_hex(b)}


def percent_decode(s):
    out = bytearray()
    i = 0
    while i < len(s):
        if s[i] == '%' and re.fullmatch(r'[0-9A-Fa-f]{2}', s[i + 1:i + 3] or ''):
            out.append(int(s[i + 1:i + 3], 16))
            i += 3
        else:
            out += s[i].encode('utf-8', 'surrogatepass')
            i += 1
    return bytes(out)


def U(url):
    if not url[:5].lower() == 'data:':
        return {'url': url}
    comma = url.find(',')
    if comma < 0:
        return {'textSha256': sha_hex(url.encode('utf-8'))}
    params = url[5:comma].split(';')
    mt = media_type(params[0]) or 'text/plain'
    data = url[comma + 1:]
    if any(p.strip().lower() == 'base64' for p in params[1:]):
        b64 = percent_decode(data).decode('utf-8', 'replace') if '%' in data else data
        b = decode_b64(b64)
        if b is not None:
            return from_bytes(b, mt)
        return {'textSha256': sha_hex(data.encode('utf-8')), 'mediaType': mt}
    return from_bytes(percent_decode(data), mt)


def B(data, mt):
    if data[:5].lower() == 'data:':
        return U(data)
    b = decode_b64(data)
    if b is not None:
        return from_bytes(b, mt)
    r = {'textSha256': sha_hex(data.encode('utf-8'))}
    if mt:
        r['mediaType'] = mt
    return r


def A_obj(src):
    mt = None
    for k in ('media_type', 'mediaType', 'mime_type', 'mimeType'):
        if k in src and src[k] is not None:
            mt = media_type(src[k])
            break
    if isinstance(src.get('sha256'), str):
        return {'sha256': src['sha256'], **({'mediaType': mt} if mt else {})}
    if isinstance(src.get('textSha256'), str):
        return {'textSha256': src['textSha256'], **({'mediaType': mt} if mt else {})}
    if src.get('type') == 'text' and isinstance(src.get('data'), str):
        return from_bytes(src['data'].encode('utf-8'), mt or 'text/plain')
    for k in ('data', 'file_data'):
        if isinstance(src.get(k), str):
            return B(src[k], mt)
    for k in ('url', 'file_url', 'image_url'):
        if isinstance(src.get(k), str):
            return U(src[k])
    if isinstance(src.get('path'), str):
        return {'path': src['path']}
    for k in ('file_id', 'fileId'):
        if isinstance(src.get(k), str):
            return {'fileId': src[k]}
    return None


def A(v):
    if isinstance(v, str):
        if v[:5].lower() == 'data:' or re.match(r'^[a-z][a-z0-9+.-]*://', v, re.I):
            return U(v)
        return {'path': v}
    if is_obj(v):
        a = A_obj(v)
        return a if a is not None else v
    return v


AUDIO = {'mp3': 'audio/mpeg', 'wav': 'audio/wav'}


# Messages ------------------------------------------------------------------------------------

class Ref:
    """A result's reference to a call id, resolved once the whole conversation is read."""
    def __init__(self, k, raw, name):
        self.k, self.raw, self.name = k, raw, name


class Ids:
    def __init__(self, refs=False):
        self.map = {}
        self.calls = set()  # ids seen as a call's own id
        self.refs = refs    # results' references become Ref (resolved by resolve())

    def number(self, raw):
        k = (type(raw).__name__ if not is_num(raw) else 'number', canonical_text(raw) if not isinstance(raw, str) else raw)
        if isinstance(raw, str):
            k = ('string', raw)
        if k not in self.map:
            self.map[k] = 'call_%d' % len(self.map)
        return k, self.map[k]

    def of(self, raw):
        if raw is None:
            return None
        k, name = self.number(raw)
        self.calls.add(k)
        return name

    def ref(self, raw):
        if raw is None:
            return None
        k, name = self.number(raw)
        return Ref(k, raw, name) if self.refs else name

    def resolve(self, v):
        """Replaces each Ref: a dangling id (no call of the request has it, and it is not spelled
        call_<digits>) is kept as given, any other its positional name."""
        if isinstance(v, Ref):
            dangling = v.k not in self.calls and not (isinstance(v.raw, str) and re.fullmatch(r'call_[0-9]+', v.raw))
            return v.raw if dangling else v.name
        if isinstance(v, list):
            return [self.resolve(x) for x in v]
        if isinstance(v, dict):
            return {k: self.resolve(x) for k, x in v.items()}
        return v


def put_id(out, k, v):
    if v is not None:
        out[k] = v


def set_args(out, raw):
    if isinstance(raw, str):
        try:
            v = strict_loads(raw)
        except KeyError_:
            out['argumentsText'] = raw
            return
        if v is not None:
            out['arguments'] = v
    elif raw is not None:
        out['arguments'] = raw


LC_ROLES = {'human': 'user', 'ai': 'assistant', 'system': 'system', 'developer': 'developer', 'tool': 'tool', 'function': 'function'}


def from_langchain(m):
    if m.get('lc') == 1 and m.get('type') == 'constructor' and isinstance(m.get('id'), list) and is_obj(m.get('kwargs')):
        fields = m['kwargs']
        kind = str(m['id'][-1])
    elif isinstance(m.get('lc_namespace'), list):
        # A JSON object has no _getType()/getType(); its class name is Object.
        fields = m
        kind = 'Object'
    else:
        return None
    kind = re.sub(r'Chunk$', '', kind)
    kind = re.sub(r'Message$', '', kind).lower()
    role = LC_ROLES.get(kind)
    if role is None:
        role = fields.get('role') if fields.get('role') is not None else kind
    out = {'role': role, 'content': fields.get('content')}
    if isinstance(fields.get('name'), str):
        out['name'] = fields['name']
    if 'tool_call_id' in fields:
        out['tool_call_id'] = fields['tool_call_id']
    tc = fields.get('tool_calls')
    if isinstance(tc, list) and tc:
        out['tool_calls'] = [{'id': c.get('id'), 'type': 'function', 'function': {'name': c.get('name'), 'arguments': c.get('args')}} if is_obj(c) else c for c in tc]
    return out


class Normalizer:
    def __init__(self, refs=False):
        self.ids = Ids(refs)
        self.depth = 0

    def C(self, v, path):
        if v is None:
            return []
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise KeyError_('E_DEPTH', path)
        parts = v if isinstance(v, list) else [v]
        out = []
        for p in parts:
            n = self.part(p)
            if n is not _NONE:
                out.append(n)
        self.depth -= 1
        return out

    def part(self, p):
        if isinstance(p, str):
            return _NONE if p == '' else {'type': 'text', 'text': p}
        if not is_obj(p):
            return p
        t = p.get('type')
        if t in ('text', 'input_text', 'output_text'):
            if p.get('text') in ('', None):
                return _NONE
            return rest(p, {'type': 'text', 'text': p['text']}, ['type'])
        if t == 'image_url':
            iu = p.get('image_url')
            src = iu['url'] if is_obj(iu) and isinstance(iu.get('url'), str) else iu
            out = {'type': 'image'}
            img = A(src)
            if img is not None and img != []:
                out['image'] = img
            if is_obj(iu):
                rest(iu, out, ['url'])
            return rest(p, out, ['type', 'image_url'])
        if t == 'input_image':
            return rest(p, {'type': 'image', 'image': A(p)}, ['type', 'image_url', 'file_id'])
        if t == 'image':
            src = p.get('source')
            if src is None:
                src = p.get('image')
            if src is None:
                src = p
            return rest(p, {'type': 'image', 'image': A(src)}, ['type', 'source', 'image', 'data', 'url', 'path', 'image_url', 'file_id', 'media_type', 'mediaType', 'mime_type', 'mimeType'])
        if t in ('input_audio', 'audio'):
            h = p['input_audio'] if is_obj(p.get('input_audio')) else p['audio'] if is_obj(p.get('audio')) else p
            fmt = h.get('format')
            if isinstance(fmt, str) and h.get('mediaType') is None and h.get('media_type') is None:
                h = {**h, 'mediaType': AUDIO.get(fmt.lower(), 'audio/' + fmt.lower())}
            return rest(p, {'type': 'audio', 'audio': A(h)}, ['type', 'input_audio', 'audio', 'data', 'format', 'url', 'path', 'media_type', 'mediaType'])
        if t in ('file', 'input_file', 'document'):
            h = p['file'] if is_obj(p.get('file')) else p['source'] if is_obj(p.get('source')) else p
            out = {'type': 'file'}
            att = None if h.get('type') == 'content' else A_obj(h)
            if att is not None:
                out['file'] = att
            elif h.get('type') == 'content':
                out['content'] = self.C(h.get('content'), '')
            elif h is p and 'content' in p:
                out['content'] = self.C(p.get('content'), '')
            elif h is not p:
                out['file'] = h
            fn = p.get('filename')
            if fn is None and h is not p:
                fn = h.get('filename')
            if fn is not None and fn != []:
                out['filename'] = fn
            return rest(p, out, ['type', 'file', 'source', 'data', 'file_data', 'file_id', 'fileId', 'file_url', 'url', 'path', 'media_type', 'mediaType'])
        if t == 'tool_use':
            out = {'type': 'tool_call'}
            put_id(out, 'id', self.ids.of(p.get('id')))
            keep(out, 'name', p.get('name'))
            set_args(out, p.get('input'))
            return rest(p, out, ['type', 'input'])
        if t == 'tool_call':
            out = {'type': 'tool_call'}
            put_id(out, 'id', self.ids.of(p.get('id')))
            keep(out, 'name', p.get('name'))
            if p.get('arguments') is not None:
                out['arguments'] = p['arguments']
            if p.get('argumentsText') is not None:
                out['argumentsText'] = p['argumentsText']
            return rest(p, out, ['type', 'input'])
        if t == 'tool-call':
            out = {'type': 'tool_call'}
            put_id(out, 'id', self.ids.of(p.get('toolCallId')))
            keep(out, 'name', p.get('toolName'))
            a = p.get('input')
            set_args(out, a if a is not None else p.get('args'))
            return rest(p, out, ['type', 'toolCallId', 'toolName', 'input', 'args'])
        if t == 'tool_result':
            out = {'type': 'tool_result'}
            rid = p.get('tool_use_id')
            put_id(out, 'id', self.ids.ref(rid if rid is not None else p.get('id')))
            out['content'] = self.C(p.get('content'), '')
            if p.get('is_error') is True:
                out['is_error'] = True
            return rest(p, out, ['type', 'tool_use_id', 'is_error'])
        if t == 'tool-result':
            out = {'type': 'tool_result'}
            put_id(out, 'id', self.ids.ref(p.get('toolCallId')))
            o = p.get('output') if is_obj(p.get('output')) else None
            if o is not None:
                value = o.get('value')
            else:
                value = p.get('output') if p.get('output') is not None else p.get('result')
            out['content'] = self.C(value if (isinstance(value, str) or value is None) else [{'type': 'json', 'json': value}], '')
            if p.get('isError') is True or (o is not None and isinstance(o.get('type'), str) and o['type'].startswith('error')):
                out['is_error'] = True
            return rest(p, out, ['type', 'toolCallId', 'toolName', 'output', 'result', 'isError'])
        if t == 'thinking':
            out = {'type': 'thinking'}
            keep(out, 'thinking', p.get('thinking'))
            return rest(p, out, ['type', 'signature'])
        if t == 'function_call':
            out = {'type': 'function_call'}
            keep(out, 'name', p.get('name'))
            if p.get('arguments') is not None:
                out['arguments'] = p['arguments']
            return rest(p, out, ['type'])
        return self.other(p)

    def other(self, p):
        out = {}
        t = p.get('type') if isinstance(p.get('type'), str) else ''
        put_id(out, 'tool_use_id', self.ids.ref(p.get('tool_use_id')))
        put_id(out, 'tool_call_id', self.ids.ref(p.get('tool_call_id')))
        put_id(out, 'call_id', (self.ids.ref if t.endswith('_output') else self.ids.of)(p.get('call_id')))
        if t.endswith('tool_use') or t.endswith('_call'):
            put_id(out, 'id', self.ids.of(p.get('id')))
        return rest(p, out)

    def tool_call(self, c):
        if not is_obj(c):
            return c
        out = {'type': 'tool_call'}
        put_id(out, 'id', self.ids.of(c.get('id')))
        if c.get('type') in (None, 'function'):
            f = c['function'] if is_obj(c.get('function')) else {}
            keep(out, 'name', f.get('name'))
            set_args(out, f.get('arguments'))
            return out
        out['kind'] = c['type']
        return rest(c, out, ['type', 'index'])

    def message(self, m, path):
        if not is_obj(m):
            raise KeyError_('E_REQUEST', path)
        lc = from_langchain(m)
        if lc is not None:
            m = lc
        if 'role' not in m and isinstance(m.get('type'), str) and m['type'] != 'message':
            return self.item(m, path)
        out = {}
        keep(out, 'role', m.get('role'))
        rid = self.ids.ref(m.get('tool_call_id'))
        parts = self.C(m.get('content'), path + '.content')
        if isinstance(m.get('tool_calls'), list):
            parts += [self.tool_call(c) for c in m['tool_calls']]
        if is_obj(m.get('function_call')):
            call = {'type': 'function_call'}
            keep(call, 'name', m['function_call'].get('name'))
            set_args(call, m['function_call'].get('arguments'))
            parts.append(call)
        if m.get('tool_call_id') is not None:
            parts = [{'type': 'tool_result', 'id': rid, 'content': parts}]
        out['content'] = parts
        return rest(m, out, ['type', 'tool_calls', 'function_call', 'tool_call_id'] + MESSAGE_NOISE)

    def item(self, m, path):
        t = m['type']
        if t == 'function_call':
            call = {'type': 'tool_call'}
            put_id(call, 'id', self.ids.of(m.get('call_id')))
            keep(call, 'name', m.get('name'))
            set_args(call, m.get('arguments'))
            return {'role': 'assistant', 'content': [call]}
        if t == 'function_call_output':
            res = {'type': 'tool_result'}
            put_id(res, 'id', self.ids.ref(m.get('call_id')))
            res['content'] = self.C(m.get('output'), path + '.output')
            return {'role': 'tool', 'content': [res]}
        if t == 'item_reference':
            return m
        return self.other({k: v for k, v in m.items() if k not in ('id', 'status')})

    def tool(self, t, legacy):
        if not is_obj(t):
            return t
        ty = t.get('type')
        if ty == 'function' and is_obj(t.get('function')):
            out = self.D(t['function'])
            rest(t, out, ['type', 'function'])
        elif ty in (None, 'function') or (ty == 'custom' and 'input_schema' in t):
            out = self.D(t)
        else:
            out = rest(t, {})
        if legacy:
            out['legacy'] = True
        return out

    def D(self, f):
        out = {}
        keep(out, 'name', f.get('name'))
        keep(out, 'description', f.get('description'))
        params = None
        for k in ('parameters', 'input_schema', 'inputSchema'):
            if f.get(k) is not None:
                params = f[k]
                break
        if is_obj(params) and is_obj(params.get('jsonSchema')):
            params = params['jsonSchema']
        keep(out, 'parameters', params)
        return rest(f, out, ['type', 'input_schema', 'inputSchema'])


_NONE = object()


def blocks(m):
    return [b for b in m['content'] if is_obj(b)] if is_obj(m) and isinstance(m.get('content'), list) else []


def detect(body):
    if not is_obj(body):
        raise KeyError_('E_REQUEST', '$')
    if 'messages' not in body:
        if 'instructions' in body or 'previous_response_id' in body:
            return 'openai-responses'
        if 'input' in body:
            inp = body['input']
            ev = 'encoding_format' in body or 'dimensions' in body or is_obj(body.get('options'))
            if isinstance(inp, list) and inp and all(isinstance(x, str) or is_num(x) or (isinstance(x, list) and all(is_num(y) for y in x)) for x in inp):
                ev = True
            if isinstance(body.get('model'), str) and 'embed' in body['model'].lower():
                ev = True
            return 'openai-embeddings' if ev else 'openai-responses'
        if 'prompt' in body:
            return 'generic'
        raise KeyError_('E_REQUEST', '$')
    msgs = body['messages']
    if not isinstance(msgs, list):
        raise KeyError_('E_REQUEST', '$.messages')
    if is_obj(body.get('context')) or is_obj(body.get('options')):
        return 'generic'
    tools = body['tools'] if isinstance(body.get('tools'), list) else []
    if any(k in body for k in ('system', 'stop_sequences', 'top_k', 'thinking')):
        return 'anthropic'
    if any(is_obj(t) and 'input_schema' in t for t in tools):
        return 'anthropic'
    for m in msgs:
        for b in blocks(m):
            if b.get('type') in ('tool_use', 'tool_result', 'thinking', 'redacted_thinking'):
                return 'anthropic'
            if b.get('type') in ('image', 'document') and is_obj(b.get('source')):
                return 'anthropic'
    if any(k in body for k in OPENAI_ARGS):
        return 'openai-chat'
    if any(is_obj(t) and t.get('type') == 'function' and is_obj(t.get('function')) for t in tools):
        return 'openai-chat'
    if any(is_obj(m) and ('tool_calls' in m or 'tool_call_id' in m or 'function_call' in m) for m in msgs):
        return 'openai-chat'
    if any(b.get('type') in ('image_url', 'input_audio', 'file') for m in msgs for b in blocks(m)):
        return 'openai-chat'
    if all(is_obj(m) and isinstance(m.get('role'), str) and m['role'] in OPENAI_ROLES for m in msgs):
        return 'openai-chat'
    return 'generic'


def option_value(name, v):
    if v is None:
        return _NONE
    if name == 'temperature':
        return 0.0 if is_num(v) and v == 0 else _NONE
    if name in ('stop', 'stop_sequences') and isinstance(v, str):
        return [v]
    if name in SHAPE_DEFAULTS:
        d = SHAPE_DEFAULTS[name]
        if is_obj(d):
            if is_obj(v) and len(v) == len(d) and all(k in v and jeq(v[k], d[k]) for k in d):
                return _NONE
        elif jeq(v, d):
            return _NONE
    if name == 'stream_options' and is_obj(v):
        out = {k: x for k, x in v.items() if not (x is None or (k == 'include_usage' and x is False))}
        return out if out else _NONE
    if name == 'text' and is_obj(v):
        out = {k: x for k, x in v.items() if not (x is None or (k == 'format' and is_obj(x) and len(x) == 1 and x.get('type') == 'text'))}
        return out if out else _NONE
    return v


def strip(v, keys):
    if isinstance(v, list):
        return [strip(x, keys) for x in v]
    if is_obj(v):
        return {k: strip(x, keys) for k, x in v.items() if k not in keys}
    return v


def split_tool_results(messages):
    out = []
    for m in messages:
        if not (is_obj(m) and m.get('role') == 'user' and isinstance(m.get('content'), list) and any(is_obj(p) and p.get('type') == 'tool_result' for p in m['content'])):
            out.append(m)
            continue
        run = []
        for p in m['content']:
            if is_obj(p) and p.get('type') == 'tool_result':
                if run:
                    out.append({**m, 'content': run})
                    run = []
                out.append({'role': 'tool', 'content': [p]})
            else:
                run.append(p)
        if run:
            out.append({**m, 'content': run})
    return out


def join_calls(raw, messages):
    out = []
    for r, m in zip(raw, messages):
        prev = out[-1] if out else None
        if is_obj(r) and r.get('type') == 'function_call' and 'role' not in r and is_obj(prev) and prev.get('role') == 'assistant' and isinstance(prev.get('content'), list) and is_obj(m):
            out[-1] = {**prev, 'content': prev['content'] + m['content']}
        else:
            out.append(m)
    return out


def tools_list(v, name):
    if v is None:
        return []
    if isinstance(v, list):
        return v
    if name == 'tools' and is_obj(v):
        return [{'name': k, **x} if is_obj(x) else x for k, x in v.items()]
    raise KeyError_('E_REQUEST', '$.' + name)


def sort_tools(tools):
    def name_of(t):
        return t['name'] if is_obj(t) and isinstance(t.get('name'), str) else ''
    return sorted(tools, key=lambda t: (utf16_key(name_of(t)), canonical(t)))


def normalize(body, opts=None):
    opts = opts or {}
    if 'provider' in opts and opts['provider'] not in PROVIDERS + GEMINI_SHAPES:
        raise KeyError_('E_ARG')
    for k in ('ignoreArgs', 'volatileKeys'):
        if k in opts and not (isinstance(opts[k], list) and all(isinstance(x, str) for x in opts[k])):
            raise KeyError_('E_ARG')
    g = gemini_normalize(body, opts)
    if g is not None:
        return g
    provider = opts.get('provider') or detect(body)
    if not is_obj(body):
        raise KeyError_('E_REQUEST', '$')
    ignore = set(opts.get('ignoreArgs', []))

    def arg(k):
        return None if k in ignore else body.get(k)

    def has(k):
        return k not in ignore and k in body

    layout = LAYOUT[provider]
    options = {}
    for k, v in body.items():
        if k in layout or k in DROPPED or k in ignore:
            continue
        x = option_value(k, v)
        if x is not _NONE:
            options[k] = x
    if provider in ('generic', 'openai-embeddings') and is_obj(arg('options')):
        for k, v in arg('options').items():
            if k in DROPPED or k in ignore:
                continue
            x = option_value(k, v)
            if x is _NONE:
                options.pop(k, None)
            else:
                options[k] = x
    view = {}
    model = arg('model')
    if model is not None:
        view['model'] = model['modelId'] if is_obj(model) and isinstance(model.get('modelId'), str) else model

    if provider == 'openai-embeddings':
        inp = arg('input')
        if inp is None:
            items = []
        elif isinstance(inp, list) and not all(is_num(x) for x in inp):
            items = list(inp)
        else:
            items = [inp]
        view['input'] = items
        view['options'] = options
        return provider, view, items, [], []

    n = Normalizer(refs=True)
    sys_raw = arg('instructions') if provider == 'openai-responses' else arg('system')
    system = n.C(sys_raw, '$.system')
    where = '$.messages'
    if provider == 'openai-responses':
        where = '$.input'
        inp = arg('input')
        if isinstance(inp, str):
            raw = [{'role': 'user', 'content': inp}]
        elif isinstance(inp, list):
            raw = inp
        elif inp is None:
            raw = []
        else:
            raise KeyError_('E_REQUEST', '$.input')
    else:
        msgs = arg('messages')
        if isinstance(msgs, list):
            raw = msgs
        elif not has('messages') and ('messages' in ignore or provider == 'generic'):
            raw = []
        else:
            raise KeyError_('E_REQUEST', '$.messages')
    messages = [n.message(m, '%s[%d]' % (where, i)) for i, m in enumerate(raw)]
    if provider == 'generic':
        pr = arg('prompt')
        if isinstance(pr, str):
            messages.append(n.message({'role': 'user', 'content': pr}, '$.prompt'))
        elif isinstance(pr, list):
            for i, m in enumerate(pr):
                messages.append(n.message(m, '$.prompt[%d]' % i))
        elif pr is not None:
            raise KeyError_('E_REQUEST', '$.prompt')
    if provider == 'openai-responses':
        messages = join_calls(raw, messages)
    messages = split_tool_results(messages)
    system, messages = n.ids.resolve(system), n.ids.resolve(messages)
    tools = []
    for name, legacy in (('tools', False), ('functions', True)):
        for t in tools_list(arg(name), name):
            tools.append(n.tool(t, legacy))
    allm = ([{'role': 'system', 'content': system}] if system else []) + messages
    vk = opts.get('volatileKeys')
    if vk:
        allm = strip(allm, set(vk))
        tools = strip(tools, set(vk))
    tools = sort_tools(tools)
    view['messages'] = allm
    view['tools'] = tools
    view['options'] = options
    names = sorted({t['name'] for t in tools if is_obj(t) and isinstance(t.get('name'), str)}, key=utf16_key)
    ctx = arg('context')
    ckeys = sorted(ctx.keys(), key=utf16_key) if is_obj(ctx) else []
    return provider, view, allm, names, ckeys



# ---------------------------------------------------------------------------------------------
# Google Gemini (docs/hash-spec.md, "Google Gemini")

GEMINI_SHAPES = ['gemini', 'gemini-embeddings']
GEMINI_OPS = {'generateContent': 'gemini', 'streamGenerateContent': 'gemini', 'countTokens': 'gemini',
              'embedContent': 'gemini-embeddings', 'batchEmbedContents': 'gemini-embeddings'}
GEMINI_ROUTE = re.compile(r'/(?:models|tunedModels)/(?P<model>[^/:]+):(?P<op>[A-Za-z]+)\Z')
GEN_DEFAULTS = {'candidateCount': 1.0, 'responseMimeType': 'text/plain'}


def camel(k):
    return re.sub(r'_([a-z0-9])', lambda m: m.group(1).upper(), k)


NEVER = DROPPED | {camel(k) for k in DROPPED}


def camel_names(o):
    out = {}
    for k, v in o.items():
        c = camel(k)
        if c not in out or c == k:
            out[c] = v
    return out


def add_rest(out, src, skip):
    for k, v in src.items():
        if k in skip or k in out or v is None or (isinstance(v, list) and not v):
            continue
        out[k] = v


def gemini_route(opts):
    ep = opts.get('endpoint')
    if not is_obj(ep) or not isinstance(ep.get('url'), str):
        return None
    method = ep.get('method') if isinstance(ep.get('method'), str) else 'POST'
    if method.upper() != 'POST':
        return None
    url = ep['url']
    path, _, query = url.partition('?')
    m = GEMINI_ROUTE.search(path)
    if not m or m.group('op') not in GEMINI_OPS:
        return None
    alt = None
    for k, v in parse_qsl(query, keep_blank_values=True):
        if k == 'alt':
            alt = v
            break
    return {'op': m.group('op'), 'shape': GEMINI_OPS[m.group('op')], 'model': unquote(m.group('model')), 'alt': alt}


def gemini_detect(body):
    if not is_obj(body):
        return None
    if any(k in body for k in ('messages', 'input', 'prompt', 'instructions', 'previous_response_id')):
        return None
    if isinstance(body.get('contents'), list) or is_obj(body.get('contents')) or is_obj(body.get('generateContentRequest')) or is_obj(body.get('generate_content_request')):
        return 'gemini'
    if is_obj(body.get('content')) and 'parts' in body['content']:
        return 'gemini-embeddings'
    req = body.get('requests')
    if isinstance(req, list) and req and all(is_obj(r) and is_obj(r.get('content')) for r in req):
        return 'gemini-embeddings'
    return None


class Fresh:
    """A call id Gemini left out: equal only to itself."""
    def __init__(self, n):
        self.n = n


class GeminiNormalizer:
    def __init__(self):
        self.n = Normalizer()
        self.fresh = 0
        self.open = []  # [name, raw]

    def id_of(self, raw):
        if isinstance(raw, Fresh):
            k = ('fresh', raw.n)
            if k not in self.n.ids.map:
                self.n.ids.map[k] = 'call_%d' % len(self.n.ids.map)
            return self.n.ids.map[k]
        return self.n.ids.of(raw)

    def new(self):
        f = Fresh(self.fresh)
        self.fresh += 1
        return f

    def call(self, name, cid):
        raw = cid if cid is not None else self.new()
        self.open.append([name, raw])
        return self.id_of(raw)

    def response(self, name, rid):
        for i, (n, raw) in enumerate(self.open):
            if (rid is not None and not isinstance(raw, Fresh) and raw == rid) or (rid is None and n == name):
                del self.open[i]
                return self.id_of(raw), True
        return self.id_of(rid if rid is not None else self.new()), rid is not None

    def parts(self, v, path):
        if v is None:
            return []
        out = []
        for p in (v if isinstance(v, list) else [v]):
            x = self.part(p, path)
            if x is not _NONE:
                out.append(x)
        return out

    def part(self, p, path):
        if isinstance(p, str):
            return _NONE if p == '' else {'type': 'text', 'text': p}
        if not is_obj(p):
            return p
        src = camel_names(p)
        out = {}
        if 'text' in src:
            used = ['text', 'thought']
            if src.get('thought') is True:
                out['type'] = 'thinking'
                if src['text'] != '' and src['text'] is not None:
                    out['thinking'] = src['text']
            else:
                if src['text'] == '' or src['text'] is None:
                    return _NONE
                out['type'] = 'text'
                out['text'] = src['text']
        elif is_obj(src.get('inlineData')) or is_obj(src.get('fileData')):
            inline = is_obj(src.get('inlineData'))
            name = 'inlineData' if inline else 'fileData'
            used = [name]
            d = camel_names(src[name])
            mt = d.get('mimeType')
            t = mt.lower() if isinstance(mt, str) else ''
            kind = 'image' if t.startswith('image/') else 'audio' if t.startswith('audio/') else 'file'
            out['type'] = kind
            if inline:
                out[kind] = A({k: d[k] for k in ('data', 'mimeType') if k in d})
            else:
                out[kind] = A(d['fileUri']) if isinstance(d.get('fileUri'), str) else A(d)
            if d.get('displayName') is not None:
                out['filename'] = d['displayName']
        elif is_obj(src.get('functionCall')):
            used = ['functionCall']
            c = camel_names(src['functionCall'])
            out['type'] = 'tool_call'
            out['id'] = self.call(c.get('name'), c.get('id'))
            if c.get('name') is not None:
                out['name'] = c['name']
            if c.get('args') is not None:
                out['arguments'] = c['args']
            add_rest(out, c, ['name', 'args', 'id'])
        elif is_obj(src.get('functionResponse')):
            used = ['functionResponse']
            r = camel_names(src['functionResponse'])
            rid, paired = self.response(r.get('name'), r.get('id'))
            out['type'] = 'tool_result'
            out['id'] = rid
            if not paired and r.get('name') is not None:
                out['name'] = r['name']
            value = r.get('response')
            if is_obj(value):
                keys = [k for k in value if k != 'name']
                if len(keys) == 1 and keys[0] in ('output', 'result', 'content'):
                    value = value[keys[0]]
            content = [] if value is None else value if isinstance(value, str) else [{'type': 'json', 'json': value}]
            out['content'] = self.n.C(content, path)
            add_rest(out, r, ['name', 'response', 'id'])
        else:
            names = sorted([k for k, v in src.items() if k != 'thoughtSignature' and v is not None], key=utf16_key)
            if not names:
                return _NONE
            out['type'] = names[0]
            out[names[0]] = src[names[0]]
            used = [names[0]]
        add_rest(out, src, used + ['thoughtSignature'])
        return out

    def content(self, c, path):
        if not is_obj(c):
            raise KeyError_('E_REQUEST', path)
        role = c.get('role')
        out = {'role': 'assistant' if role == 'model' else 'user' if role in (None, 'function', 'tool') else role}
        out['content'] = self.parts(c.get('parts'), path + '.parts')
        add_rest(out, camel_names(c), ['role', 'parts'])
        return out

    def tools(self, lst):
        if lst is None:
            return []
        if not isinstance(lst, list):
            raise KeyError_('E_REQUEST', '$.tools')
        out = []
        for t in lst:
            if not is_obj(t):
                out.append(t)
                continue
            named = camel_names(t)
            fns = named.get('functionDeclarations')
            if isinstance(fns, list):
                for f in fns:
                    if not is_obj(f):
                        out.append(f)
                        continue
                    decl = camel_names(f)
                    if 'parameters' not in decl and 'parametersJsonSchema' in decl:
                        decl['parameters'] = decl.pop('parametersJsonSchema')
                    out.append(self.n.tool(decl, False))
            builtin = {k: v for k, v in named.items() if k != 'functionDeclarations' and v is not None}
            if builtin:
                out.append(builtin)
        return out


def gen_config(v):
    if not is_obj(v):
        return v
    out = {}
    for name, x in camel_names(v).items():
        if x is None:
            continue
        if name == 'temperature':
            if is_num(x) and x == 0:
                out['temperature'] = 0.0
            continue
        if name in GEN_DEFAULTS and jeq(GEN_DEFAULTS[name], x):
            continue
        out[name] = camel_names(x) if name == 'thinkingConfig' and is_obj(x) else x
    return out if out else _NONE


def gemini_options(body, ignore, skip):
    out = {}
    for name, v in body.items():
        if name in skip or name in NEVER or name in ignore or v is None:
            continue
        if name == 'generationConfig':
            x = gen_config(v)
        elif name == 'safetySettings' and isinstance(v, list):
            x = sorted([camel_names(e) if is_obj(e) else e for e in v], key=canonical)
        elif name == 'toolConfig' and is_obj(v):
            x = camel_names(v)
        else:
            x = v
        if x is not _NONE:
            out[name] = x
    return out


def endpoint_options(route, out):
    if route is None:
        return
    if route['op'] not in ('generateContent', 'embedContent'):
        out['operation'] = route['op']
    if route['alt'] is not None and route['alt'] != 'json':
        out['alt'] = route['alt']


def model_name(v):
    return re.sub(r'^(?:publishers/google/)?models/', '', v) if isinstance(v, str) else v


def gemini_conversation(given, ignore, vk, route):
    body = camel_names(given)
    inner = body.get('generateContentRequest')
    if is_obj(inner) and 'contents' not in body:
        view, allm, names = gemini_conversation(inner, ignore, vk, None)
        endpoint_options(route, view['options'])
        if route is not None and 'model' not in ignore:
            view['model'] = route['model']
        return view, allm, names
    g = GeminiNormalizer()

    def arg(k):
        return None if k in ignore else body.get(k)
    view = {}
    model = route['model'] if route is not None else arg('model')
    if model is not None and 'model' not in ignore:
        view['model'] = model_name(model)
    messages = []
    system = arg('systemInstruction')
    if system is not None:
        parts = g.parts(system.get('parts'), '$.systemInstruction.parts') if is_obj(system) else g.parts(system, '$.systemInstruction')
        if parts:
            messages.append({'role': 'system', 'content': parts})
    contents = arg('contents')
    if isinstance(contents, list):
        for i, c in enumerate(contents):
            messages.append(g.content(c, '$.contents[%d]' % i))
    elif is_obj(contents):
        messages.append(g.content(contents, '$.contents'))
    elif contents is not None:
        raise KeyError_('E_REQUEST', '$.contents')
    allm = split_tool_results(messages)
    tools = g.tools(arg('tools'))
    if vk:
        allm = strip(allm, set(vk))
        tools = strip(tools, set(vk))
    tools = sort_tools(tools)
    opts = gemini_options(body, ignore, {'contents', 'systemInstruction', 'tools', 'model', 'labels', 'generateContentRequest'})
    endpoint_options(route, opts)
    view['messages'] = allm
    view['tools'] = tools
    view['options'] = opts
    names = sorted({t['name'] for t in tools if is_obj(t) and isinstance(t.get('name'), str)}, key=utf16_key)
    return view, allm, names


def embed_item(g, content, path):
    if not is_obj(content):
        return content
    parts = g.parts(content.get('parts'), path + '.parts')
    if len(parts) == 1 and is_obj(parts[0]) and parts[0].get('type') == 'text' and len(parts[0]) == 2:
        return parts[0]['text']
    return parts


def gemini_embeddings(given, ignore, vk, route):
    body = camel_names(given)
    g = GeminiNormalizer()
    view = {}
    model = route['model'] if route is not None else (None if 'model' in ignore else body.get('model'))
    if model is not None and 'model' not in ignore:
        view['model'] = model_name(model)
    reqs = body.get('requests')
    if isinstance(reqs, list):
        items = []
        for i, r in enumerate(reqs):
            if not is_obj(r):
                items.append(r)
                continue
            req = camel_names(r)
            item = embed_item(g, req.get('content'), '$.requests[%d].content' % i)
            extra = gemini_options(req, ignore, {'content', 'model'})
            m = None if req.get('model') is None or 'model' in ignore else model_name(req['model'])
            if m is not None and not (isinstance(m, str) and m == view.get('model')):
                extra['model'] = m
            items.append(dict({'content': item}, **extra) if extra else item)
    else:
        c = body.get('content')
        items = [] if c is None else [embed_item(g, c, '$.content')]
    if vk:
        items = strip(items, set(vk))
    opts = gemini_options(body, ignore, {'content', 'requests', 'model'})
    endpoint_options(route, opts)
    view['input'] = items
    view['options'] = opts
    return view, items, []


def gemini_normalize(body, opts):
    """(provider, view, messages, toolNames, contextKeys) for a Gemini body, or None for another shape."""
    route = gemini_route(opts)
    if opts.get('provider') is not None:
        if opts['provider'] not in GEMINI_SHAPES:
            return None
        shape = opts['provider']
    elif route is not None:
        shape = route['shape']
    else:
        shape = gemini_detect(body)
        if shape is None:
            return None
    if not is_obj(body):
        raise KeyError_('E_REQUEST', '$')
    ignore = {camel(k) for k in opts.get('ignoreArgs', [])}
    vk = opts.get('volatileKeys')
    if shape == 'gemini-embeddings':
        view, items, names = gemini_embeddings(body, ignore, vk, route)
    else:
        view, items, names = gemini_conversation(body, ignore, vk, route)
    return shape, view, items, names, []


def request_keys(body, opts=None, text=False):
    """The vector record for a body (a parsed value, or with text=True JSON text read strictly)."""
    if text:
        body = strict_loads(body)
    provider, view, items, names, ckeys = normalize(body, opts)
    text = canonical(view)
    ms, ps = path_hashes(items)
    sig = {'toolNames': names, 'messageCount': float(len(items)), 'contextKeys': ckeys}
    return {
        'provider': provider,
        'view': text.decode('utf-8'),
        'key': sha_hex(text),
        'messageHashes': ms,
        'pathHashes': ps,
        'signature': {'toolNames': names, 'messageCount': len(items), 'contextKeys': ckeys},
        'signatureDigest': digest(sig),
    }


# ---------------------------------------------------------------------------------------------
# The vectors

def main():
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from request_key_cases import cases  # noqa: E402  (the case list lives next to this file)

    out_path = os.path.join(os.path.dirname(__file__), '..', 'test', 'vectors', 'request-keys.json')
    if '--out' in sys.argv:
        out_path = sys.argv[sys.argv.index('--out') + 1]
    vectors = []
    for c in cases():
        v = {'name': c['name'], 'rules': c['rules']}
        if 'bodyText' in c:
            v['bodyText'] = c['bodyText']
        else:
            v['body'] = c['body']
        if c.get('options'):
            v['options'] = c['options']
        try:
            if 'bodyText' in c:
                v['expect'] = request_keys(c['bodyText'], c.get('options'), text=True)
            else:
                v['expect'] = request_keys(json.loads(json.dumps(c['body']), parse_int=float), c.get('options'))
        except KeyError_ as e:
            v['error'] = e.code
            if e.path:
                v['path'] = e.path
        vectors.append(v)
    doc = {
        'description': 'Request key vectors (spec version 2), generated by scripts/reference-key.py, an independent '
                       'implementation of docs/hash-spec.md. body (or bodyText, read strictly) + options -> provider, '
                       'canonical view, key, message and path hashes, signature; or an error code.',
        'specVersion': 2,
        'count': len(vectors),
        'vectors': vectors,
    }
    write_vectors(out_path, doc)


def write_vectors(out_path, doc):
    """Writes a vector document as the committed files have it (UTF-8, one-space indent)."""
    with open(out_path, 'w', encoding='utf-8') as f:
        json.dump(doc, f, ensure_ascii=False, indent=1)
        f.write('\n')
    print(f'{doc["count"]} vectors -> {out_path}')


if __name__ == '__main__':
    main()
