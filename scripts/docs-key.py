#!/usr/bin/env python3
"""An implementation of tapedeck's request key written from docs/hash-spec.md and
docs/matching.md alone (a clean-room check that the docs define the key completely).

Standard library only. It never reads the TypeScript sources: every rule below cites the
section of docs/hash-spec.md it implements.

Usage:
  python3 scripts/docs-key.py CASES.json [OUT.json]
    CASES.json: a JSON array of { "body": <JSON text>, "options": {...} }
    (or of { "bodyValue": <value>, ... }); writes one result per case:
    { provider, key, view, messageHashes, pathHashes, signature, signatureDigest }
    or { error: <code>, path? }.
  python3 scripts/docs-key.py --vectors test/vectors/request-keys.json
    compares with the published request-key vectors and prints agreement per shape.
"""
import copy
import hashlib
import json
import re
import sys

sys.setrecursionlimit(20000)

MAX_DEPTH = 512
PROVIDERS = ('openai-chat', 'openai-responses', 'openai-embeddings', 'anthropic', 'generic')

# "Options": never in the key.
DROPPED_ARGS = frozenset([
    'user', 'metadata', 'store', 'service_tier', 'prompt_cache_key', 'prompt_cache_retention',
    'safety_identifier', 'api_key', 'apiKey', 'api_base', 'base_url', 'organization', 'timeout',
    'request_timeout', 'request_id', 'requestId', 'idempotency_key', 'timestamp', 'created',
    'created_at', 'createdAt', 'headers', 'extra_headers', 'extra_query', 'num_retries',
    'max_retries', 'maxRetries', 'abortSignal',
])

# "Layouts (members that are not options)".
LAYOUT = {
    'openai-chat': ('messages', 'system', 'model', 'tools', 'functions', 'context'),
    'anthropic': ('messages', 'system', 'model', 'tools', 'functions', 'context'),
    'openai-responses': ('input', 'instructions', 'model', 'tools', 'functions', 'context'),
    'generic': ('messages', 'prompt', 'system', 'model', 'tools', 'functions', 'context', 'options'),
    'openai-embeddings': ('input', 'model', 'options'),
}

MESSAGE_SKIP = ('type', 'tool_calls', 'function_call', 'tool_call_id', 'id', 'status', 'timestamp',
                'created', 'created_at', 'createdAt', 'updated_at', 'updatedAt', 'request_id',
                'requestId')


class KeyError_(Exception):
    def __init__(self, code, path=None, msg=''):
        super().__init__(f'{code} {path or ""} {msg}')
        self.code = code
        self.path = path


ABSENT = object()


# ---------------------------------------------------------------- canonical(v) and digest(v)

def is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def es_number(x):
    """ECMAScript Number.prototype.toString of a double (hash-spec "canonical(v)", Numbers)."""
    x = float(x)
    if x != x or x in (float('inf'), float('-inf')):
        raise KeyError_('E_NON_FINITE')
    if x == 0:
        return '0'
    sign = '-' if x < 0 else ''
    r = repr(abs(x))
    m = re.fullmatch(r'(\d+)(?:\.(\d+))?(?:e([+-]\d+))?', r)
    ip, fp, ex = m.group(1), m.group(2) or '', int(m.group(3) or 0)
    digits = ip + fp
    point = len(ip) + ex
    while len(digits) > 1 and digits[0] == '0':
        digits = digits[1:]
        point -= 1
    digits = digits.rstrip('0') or '0'
    k, n = len(digits), point
    if k <= n <= 21:
        s = digits + '0' * (n - k)
    elif 0 < n <= 21:
        s = digits[:n] + '.' + digits[n:]
    elif -6 < n <= 0:
        s = '0.' + '0' * (-n) + digits
    else:
        e = n - 1
        es = ('+' if e >= 0 else '-') + str(abs(e))
        s = digits + 'e' + es if k == 1 else digits[0] + '.' + digits[1:] + 'e' + es
    return sign + s


_ESC = {'"': '\\"', '\\': '\\\\', '\b': '\\b', '\t': '\\t', '\n': '\\n', '\f': '\\f', '\r': '\\r'}
_SURR = re.compile('[\ud800-\udfff]')


def es_string(s):
    if _SURR.search(s):
        raise KeyError_('E_LONE_SURROGATE')
    out = ['"']
    for ch in s:
        if ch in _ESC:
            out.append(_ESC[ch])
        elif ord(ch) < 0x20:
            out.append('\\u%04x' % ord(ch))
        else:
            out.append(ch)
    out.append('"')
    return ''.join(out)


def utf16_key(s):
    return s.encode('utf-16-be', 'surrogatepass')


def canonical(v):
    parts = []

    def w(x, depth):
        if x is None:
            parts.append('null')
        elif x is True:
            parts.append('true')
        elif x is False:
            parts.append('false')
        elif is_num(x):
            parts.append(es_number(x))
        elif isinstance(x, str):
            parts.append(es_string(x))
        elif isinstance(x, list):
            if depth + 1 > MAX_DEPTH:
                raise KeyError_('E_DEPTH')
            parts.append('[')
            for i, e in enumerate(x):
                if i:
                    parts.append(',')
                w(e, depth + 1)
            parts.append(']')
        elif isinstance(x, dict):
            if depth + 1 > MAX_DEPTH:
                raise KeyError_('E_DEPTH')
            parts.append('{')
            for i, k in enumerate(sorted(x.keys(), key=utf16_key)):
                if i:
                    parts.append(',')
                parts.append(es_string(k))
                parts.append(':')
                w(x[k], depth + 1)
            parts.append('}')
        else:
            raise KeyError_('E_TYPE')

    w(v, 0)
    return ''.join(parts).encode('utf-8')


def sha_hex(b):
    return hashlib.sha256(b).hexdigest()


def digest(v):
    return sha_hex(canonical(v))


def utf8(s):
    # JavaScript's TextEncoder writes a lone surrogate as U+FFFD.
    return _SURR.sub('\ufffd', s).encode('utf-8')


# ---------------------------------------------------------------- strict JSON (I-JSON) reader

_NUM = re.compile(r'-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?')
_WS = ' \t\n\r'
_SIMPLE_ESC = {'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}


def parse_ijson(text):
    """RFC 8259 JSON text that canonical(v) accepts: no duplicate names (after unescaping),
    no lone surrogate, no literal that overflows a double, at most 512 levels. The first fault
    in text order wins, except that a duplicate name is found when its object ends (hash-spec
    "Errors"). Numbers become doubles."""
    n = len(text)
    pos = 0

    def ws():
        nonlocal pos
        while pos < n and text[pos] in _WS:
            pos += 1

    def string():
        nonlocal pos
        pos += 1  # opening quote
        out = []
        while True:
            if pos >= n:
                raise KeyError_('E_JSON')
            c = text[pos]
            if c == '"':
                pos += 1
                return ''.join(out)
            if c == '\\':
                if pos + 1 >= n:
                    raise KeyError_('E_JSON')
                e = text[pos + 1]
                if e in _SIMPLE_ESC:
                    out.append(_SIMPLE_ESC[e])
                    pos += 2
                    continue
                if e != 'u' or not re.fullmatch('[0-9A-Fa-f]{4}', text[pos + 2:pos + 6]):
                    raise KeyError_('E_JSON')
                u = int(text[pos + 2:pos + 6], 16)
                pos += 6
                if 0xD800 <= u <= 0xDBFF:
                    if text[pos:pos + 2] == '\\u' and re.fullmatch('[0-9A-Fa-f]{4}', text[pos + 2:pos + 6]):
                        lo = int(text[pos + 2:pos + 6], 16)
                        if 0xDC00 <= lo <= 0xDFFF:
                            out.append(chr(0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00)))
                            pos += 6
                            continue
                    raise KeyError_('E_LONE_SURROGATE')
                if 0xDC00 <= u <= 0xDFFF:
                    raise KeyError_('E_LONE_SURROGATE')
                out.append(chr(u))
                continue
            if ord(c) < 0x20:
                raise KeyError_('E_JSON')
            if 0xD800 <= ord(c) <= 0xDFFF:
                raise KeyError_('E_LONE_SURROGATE')
            out.append(c)
            pos += 1

    def value(depth):
        nonlocal pos
        ws()
        if pos >= n:
            raise KeyError_('E_JSON')
        c = text[pos]
        if c == '{' or c == '[':
            if depth + 1 > MAX_DEPTH:
                raise KeyError_('E_DEPTH')
            pos += 1
            ws()
            if c == '{':
                obj = {}
                dup = False
                if pos < n and text[pos] == '}':
                    pos += 1
                    return obj
                while True:
                    ws()
                    if pos >= n or text[pos] != '"':
                        raise KeyError_('E_JSON')
                    k = string()
                    # A duplicate is reported when its object ends: a fault before the `}` wins.
                    dup = dup or k in obj
                    ws()
                    if pos >= n or text[pos] != ':':
                        raise KeyError_('E_JSON')
                    pos += 1
                    obj[k] = value(depth + 1)
                    ws()
                    if pos < n and text[pos] == ',':
                        pos += 1
                        continue
                    if pos < n and text[pos] == '}':
                        pos += 1
                        if dup:
                            raise KeyError_('E_DUPLICATE_KEY')
                        return obj
                    raise KeyError_('E_JSON')
            arr = []
            if pos < n and text[pos] == ']':
                pos += 1
                return arr
            while True:
                arr.append(value(depth + 1))
                ws()
                if pos < n and text[pos] == ',':
                    pos += 1
                    continue
                if pos < n and text[pos] == ']':
                    pos += 1
                    return arr
                raise KeyError_('E_JSON')
        if c == '"':
            return string()
        for lit, v in (('true', True), ('false', False), ('null', None)):
            if text.startswith(lit, pos):
                pos += len(lit)
                return v
        m = _NUM.match(text, pos)
        if not m:
            raise KeyError_('E_JSON')
        pos = m.end()
        f = float(m.group(0))
        if f in (float('inf'), float('-inf')):
            raise KeyError_('E_NON_FINITE')
        return f

    v = value(0)
    ws()
    if pos != n:
        raise KeyError_('E_JSON')
    return v


# ---------------------------------------------------------------- helpers

def dc(v):
    return copy.deepcopy(v)


def empty_list(v):
    return isinstance(v, list) and len(v) == 0


def nn(v):
    """`x ?? y` reads: null or absent is None here."""
    return v


def rest(src, out, skip=()):
    """rest(src, out, skip): every member not already in out, not cache_control, not in skip,
    whose value is not null and not []."""
    for k, v in src.items():
        if k in out or k == 'cache_control' or k in skip or v is None or empty_list(v):
            continue
        out[k] = dc(v)
    return out


def set_opt(out, name, v):
    """`name?`: absent when null or []."""
    if v is None or empty_list(v):
        return
    out[name] = dc(v)


class Ids:
    """Call ids (#x): call_<k> in order of first appearance, distinct by type and value."""

    def __init__(self):
        self.seen = {}

    def num(self, v):
        if v is None:
            return ABSENT
        k = canonical(v)
        if k not in self.seen:
            self.seen[k] = 'call_%d' % len(self.seen)
        return self.seen[k]


def put_id(out, ids, v):
    r = ids.num(v)
    if r is not ABSENT:
        out['id'] = r


def args_members(v):
    """ARGS: a string that is I-JSON is parsed; any other string is argumentsText."""
    if isinstance(v, str):
        try:
            val = parse_ijson(v)
        except KeyError_:
            return {'argumentsText': v}
        return {} if val is None else {'arguments': val}
    if v is None:
        return {}
    return {'arguments': dc(v)}


# ---------------------------------------------------------------- attachments A(v), B, U

_SCHEME = re.compile(r'[a-z][a-z0-9+.\-]*://', re.I)
_B64 = re.compile(r'[A-Za-z0-9+/_\-]*={0,2}')
_B64VAL = {c: i for i, c in enumerate('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/')}
_B64VAL['-'] = 62
_B64VAL['_'] = 63


def media(mt):
    if not isinstance(mt, str):
        return None
    mt = mt.split(';', 1)[0].strip().lower()
    return mt or None


def b64_bytes(s):
    s = re.sub('[ \t\n\f\r]', '', s)
    if not _B64.fullmatch(s):
        return None
    core = s.rstrip('=')
    if len(core) % 4 == 1:
        return None
    acc = 0
    bits = 0
    out = bytearray()
    for c in core:
        acc = (acc << 6) | _B64VAL[c]
        bits += 6
        if bits >= 8:
            bits -= 8
            out.append((acc >> bits) & 0xFF)
    return bytes(out)


def B(data, mt):
    if data[:5].lower() == 'data:':
        return U(data)
    b = b64_bytes(data)
    if b is None:
        r = {'textSha256': sha_hex(utf8(data))}
    else:
        r = {'sha256': sha_hex(b)}
    if mt:
        r['mediaType'] = mt
    return r


def pct_decode(s):
    out = bytearray()
    i = 0
    while i < len(s):
        c = s[i]
        if c == '%' and i + 2 < len(s) + 0 and re.fullmatch('[0-9A-Fa-f]{2}', s[i + 1:i + 3] or ''):
            out.append(int(s[i + 1:i + 3], 16))
            i += 3
        else:
            out += utf8(c)
            i += 1
    return bytes(out)


def U(url):
    if url[:5].lower() != 'data:':
        return {'url': url}
    if ',' not in url:
        return {'textSha256': sha_hex(utf8(url))}
    head, data = url[5:].split(',', 1)
    pieces = head.split(';')
    mt = media(pieces[0]) or 'text/plain'
    if any(p.strip().lower() == 'base64' for p in pieces[1:]):
        text = data
        if '%' in text:
            text = pct_decode(text).decode('utf-8', 'replace')
        b = b64_bytes(text)
        if b is None:
            return {'textSha256': sha_hex(utf8(data)), 'mediaType': mt}
        return {'sha256': sha_hex(b), 'mediaType': mt}
    return {'sha256': sha_hex(pct_decode(data)), 'mediaType': mt}


def A(v):
    """Returns (found, value): found is False when the object is kept as given."""
    if isinstance(v, str):
        if v[:5].lower() == 'data:' or _SCHEME.match(v):
            return True, U(v)
        return True, {'path': v}
    if isinstance(v, dict):
        mtv = None
        for k in ('media_type', 'mediaType', 'mime_type', 'mimeType'):
            if v.get(k) is not None:
                mtv = v[k]
                break
        mt = media(mtv)

        def with_mt(r):
            if mt:
                r['mediaType'] = mt
            return r
        if isinstance(v.get('sha256'), str):
            return True, with_mt({'sha256': v['sha256']})
        if isinstance(v.get('textSha256'), str):
            return True, with_mt({'textSha256': v['textSha256']})
        if v.get('type') == 'text' and isinstance(v.get('data'), str):
            return True, {'sha256': sha_hex(utf8(v['data'])), 'mediaType': mt or 'text/plain'}
        if isinstance(v.get('data'), str):
            return True, B(v['data'], mt)
        if isinstance(v.get('file_data'), str):
            return True, B(v['file_data'], mt)
        for k in ('url', 'file_url', 'image_url'):
            if isinstance(v.get(k), str):
                return True, U(v[k])
        if isinstance(v.get('path'), str):
            return True, {'path': v['path']}
        for k in ('file_id', 'fileId'):
            if isinstance(v.get(k), str):
                return True, {'fileId': v[k]}
        return False, dc(v)
    return False, dc(v)


# ---------------------------------------------------------------- content C(v)

NOPART = object()


def C(v, ids):
    if v is None:
        return []
    src = v if isinstance(v, list) else [v]
    out = []
    for p in src:
        r = part(p, ids)
        if r is not NOPART:
            out.append(r)
    return out


def unknown_part(p, ids):
    out = {}
    t = p.get('type')
    for k in ('tool_use_id', 'tool_call_id', 'call_id'):
        if k in p:
            r = ids.num(p[k])
            if r is not ABSENT:
                out[k] = r
    if isinstance(t, str) and (t.endswith('tool_use') or t.endswith('_call')) and 'id' in p:
        r = ids.num(p['id'])
        if r is not ABSENT:
            out['id'] = r
    return rest(p, out)


def part(p, ids):
    if isinstance(p, str):
        return NOPART if p == '' else {'type': 'text', 'text': p}
    if not isinstance(p, dict):
        return dc(p)
    t = p.get('type')
    if t in ('text', 'input_text', 'output_text'):
        if p.get('text') is None or p.get('text') == '':
            return NOPART
        return rest(p, {'type': 'text', 'text': dc(p['text'])}, ('type',))
    if t == 'image_url':
        iu = p.get('image_url')
        url = iu['url'] if isinstance(iu, dict) and isinstance(iu.get('url'), str) else iu
        out = {'type': 'image'}
        img = A(url)[1]
        if img is not None and img != []:
            out['image'] = img
        if isinstance(iu, dict):
            rest(iu, out, ('url',))
        return rest(p, out, ('type', 'image_url'))
    if t == 'input_image':
        return rest(p, {'type': 'image', 'image': A(p)[1]}, ('type', 'image_url', 'file_id'))
    if t == 'image':
        src = p.get('source')
        if src is None:
            src = p.get('image')
        if src is None:
            src = p
        return rest(p, {'type': 'image', 'image': A(src)[1]},
                    ('type', 'source', 'image', 'data', 'url', 'path', 'image_url', 'file_id',
                     'media_type', 'mediaType', 'mime_type', 'mimeType'))
    if t in ('input_audio', 'audio'):
        if isinstance(p.get('input_audio'), dict):
            holder = p['input_audio']
        elif isinstance(p.get('audio'), dict):
            holder = p['audio']
        else:
            holder = p
        fmt = holder.get('format')
        if isinstance(fmt, str) and holder.get('mediaType') is None and holder.get('media_type') is None:
            f = fmt.lower()
            holder = dict(holder)
            holder['mediaType'] = {'mp3': 'audio/mpeg', 'wav': 'audio/wav'}.get(f, 'audio/' + f)
        return rest(p, {'type': 'audio', 'audio': A(holder)[1]},
                    ('type', 'input_audio', 'audio', 'data', 'format', 'url', 'path', 'media_type',
                     'mediaType'))
    if t in ('file', 'input_file', 'document'):
        if isinstance(p.get('file'), dict):
            holder = p['file']
        elif isinstance(p.get('source'), dict):
            holder = p['source']
        else:
            holder = p
        out = {'type': 'file'}
        found, att = (False, None)
        if holder.get('type') != 'content':
            found, att = A(holder)
        if found:
            out['file'] = att
        elif holder.get('type') == 'content':
            out['content'] = C(holder.get('content'), ids)
        elif holder is p and 'content' in p:
            out['content'] = C(p.get('content'), ids)
        elif holder is not p:
            out['file'] = dc(holder)
        fn = p.get('filename')
        if fn is None and holder is not p:
            fn = holder.get('filename')
        if fn is not None and fn != []:
            out['filename'] = dc(fn)
        return rest(p, out, ('type', 'file', 'source', 'data', 'file_data', 'file_id', 'fileId',
                             'file_url', 'url', 'path', 'media_type', 'mediaType'))
    if t == 'tool_use':
        out = {'type': 'tool_call'}
        put_id(out, ids, p.get('id'))
        set_opt(out, 'name', p.get('name'))
        out.update(args_members(p.get('input')))
        return rest(p, out, ('type', 'input'))
    if t == 'tool_call':
        out = {'type': 'tool_call'}
        put_id(out, ids, p.get('id'))
        set_opt(out, 'name', p.get('name'))
        if p.get('arguments') is not None:
            out['arguments'] = dc(p['arguments'])
        if p.get('argumentsText') is not None:
            out['argumentsText'] = dc(p['argumentsText'])
        return rest(p, out, ('type', 'input'))
    if t == 'tool-call':
        out = {'type': 'tool_call'}
        put_id(out, ids, p.get('toolCallId'))
        set_opt(out, 'name', p.get('toolName'))
        a = p.get('input')
        if a is None:
            a = p.get('args')
        out.update(args_members(a))
        return rest(p, out, ('type', 'toolCallId', 'toolName', 'input', 'args'))
    if t == 'tool_result':
        out = {'type': 'tool_result'}
        tid = p.get('tool_use_id')
        if tid is None:
            tid = p.get('id')
        put_id(out, ids, tid)
        out['content'] = C(p.get('content'), ids)
        if p.get('is_error') is True:
            out['is_error'] = True
        return rest(p, out, ('type', 'tool_use_id', 'is_error'))
    if t == 'tool-result':
        out = {'type': 'tool_result'}
        put_id(out, ids, p.get('toolCallId'))
        o = p.get('output')
        if isinstance(o, dict):
            value = o.get('value', ABSENT)
        else:
            value = o if o is not None else p.get('result', ABSENT)
        if value is ABSENT or value is None:
            out['content'] = []
        elif isinstance(value, str):
            out['content'] = C(value, ids)
        else:
            jp = {'type': 'json'}
            if value is not ABSENT:
                jp['json'] = value
            out['content'] = C([jp], ids)
        if p.get('isError') is True or (isinstance(o, dict) and isinstance(o.get('type'), str)
                                        and o['type'].startswith('error')):
            out['is_error'] = True
        return rest(p, out, ('type', 'toolCallId', 'toolName', 'output', 'result', 'isError'))
    if t == 'thinking':
        out = {'type': 'thinking'}
        set_opt(out, 'thinking', p.get('thinking'))
        return rest(p, out, ('type', 'signature'))
    if t == 'function_call':
        out = {'type': 'function_call'}
        set_opt(out, 'name', p.get('name'))
        if p.get('arguments') is not None:
            out['arguments'] = dc(p['arguments'])
        return rest(p, out, ('type',))
    return unknown_part(p, ids)


# ---------------------------------------------------------------- messages

def tool_call(tc, ids):
    if not isinstance(tc, dict):
        return dc(tc)
    t = tc.get('type')
    out = {'type': 'tool_call'}
    if t is None or t == 'function':
        put_id(out, ids, tc.get('id'))
        fn = tc.get('function')
        if isinstance(fn, dict):
            set_opt(out, 'name', fn.get('name'))
            out.update(args_members(fn.get('arguments')))
        return out
    put_id(out, ids, tc.get('id'))
    out['kind'] = dc(t)
    return rest(tc, out, ('type', 'index'))


def js_string(v):
    """String(v) of JavaScript, for the few values a LangChain class name can be."""
    if v is None:
        return 'null'
    if v is True:
        return 'true'
    if v is False:
        return 'false'
    if is_num(v):
        return es_number(v)
    if isinstance(v, str):
        return v
    if isinstance(v, list):
        return ','.join('' if e is None else js_string(e) for e in v)
    return '[object Object]'


def langchain(msg):
    """LangChain: an instance (array `lc_namespace`; from JSON its class is Object, so its
    kind is `object`) or the serialized form { lc: 1, type: "constructor", id: [...], kwargs }."""
    if isinstance(msg.get('lc_namespace'), list):
        src = msg
        kind = 'object'
    elif (is_num(msg.get('lc')) and msg['lc'] == 1 and msg.get('type') == 'constructor' and isinstance(msg.get('id'), list)
          and isinstance(msg.get('kwargs'), dict)):
        src = msg['kwargs']
        name = 'undefined' if not msg['id'] else js_string(msg['id'][-1])
        name = re.sub('Chunk$', '', name)
        name = re.sub('Message$', '', name)
        kind = name.lower()
    else:
        return None
    role = {'human': 'user', 'ai': 'assistant', 'system': 'system', 'developer': 'developer',
            'tool': 'tool', 'function': 'function'}.get(kind)
    if role is None:
        role = src.get('role')
        if role is None:
            role = kind
    out = {'role': role}
    out['content'] = src.get('content')
    if isinstance(src.get('name'), str):
        out['name'] = src['name']
    if src.get('tool_call_id') is not None:
        out['tool_call_id'] = src['tool_call_id']
    if isinstance(src.get('tool_calls'), list):
        out['tool_calls'] = [
            {'id': tc.get('id'), 'type': 'function',
             'function': {'name': tc.get('name'), 'arguments': tc.get('args')}}
            if isinstance(tc, dict) else tc for tc in src['tool_calls']]
    return out


def message(msg, path, ids):
    """Returns (normalized, from_function_call_item)."""
    if not isinstance(msg, dict):
        raise KeyError_('E_REQUEST', path)
    lc = langchain(msg)
    if lc is not None:
        msg = lc
    t = msg.get('type')
    if 'role' not in msg and isinstance(t, str) and t != 'message':
        if t == 'function_call':
            p = {'type': 'tool_call'}
            put_id(p, ids, msg.get('call_id'))
            set_opt(p, 'name', msg.get('name'))
            p.update(args_members(msg.get('arguments')))
            return {'role': 'assistant', 'content': [p]}, True
        if t == 'function_call_output':
            p = {'type': 'tool_result'}
            put_id(p, ids, msg.get('call_id'))
            p['content'] = C(msg.get('output'), ids)
            return {'role': 'tool', 'content': [p]}, False
        if t == 'item_reference':
            return dc(msg), False
        item = {k: v for k, v in msg.items() if k not in ('id', 'status')}
        return unknown_part(item, ids), False
    out = {}
    set_opt(out, 'role', msg.get('role'))
    tid = ABSENT
    if msg.get('tool_call_id') is not None:
        tid = ids.num(msg['tool_call_id'])
    parts = C(msg.get('content'), ids)
    if isinstance(msg.get('tool_calls'), list):
        for tc in msg['tool_calls']:
            parts.append(tool_call(tc, ids))
    fc = msg.get('function_call')
    if isinstance(fc, dict):
        p = {'type': 'function_call'}
        set_opt(p, 'name', fc.get('name'))
        p.update(args_members(fc.get('arguments')))
        parts.append(p)
    if tid is not ABSENT:
        tr = {'type': 'tool_result'}
        if tid is not ABSENT:
            tr['id'] = tid
        tr['content'] = parts
        parts = [tr]
    out['content'] = parts
    return rest(msg, out, MESSAGE_SKIP), False


def split_tool_results(msgs):
    out = []
    for m in msgs:
        if (isinstance(m, dict) and m.get('role') == 'user' and isinstance(m.get('content'), list)
                and any(isinstance(p, dict) and p.get('type') == 'tool_result' for p in m['content'])):
            others = {k: v for k, v in m.items() if k != 'content'}
            run = []
            for p in m['content']:
                if isinstance(p, dict) and p.get('type') == 'tool_result':
                    if run:
                        out.append(dict(others, content=run))
                        run = []
                    out.append({'role': 'tool', 'content': [p]})
                else:
                    run.append(p)
            if run:
                out.append(dict(others, content=run))
        else:
            out.append(m)
    return out


# ---------------------------------------------------------------- tools

def D(f):
    out = {}
    set_opt(out, 'name', f.get('name'))
    set_opt(out, 'description', f.get('description'))
    params = f.get('parameters')
    if params is None:
        params = f.get('input_schema')
    if params is None:
        params = f.get('inputSchema')
    if isinstance(params, dict) and isinstance(params.get('jsonSchema'), dict):
        params = params['jsonSchema']
    set_opt(out, 'parameters', params)
    return rest(f, out, ('type', 'input_schema', 'inputSchema'))


def tool(tl):
    if not isinstance(tl, dict):
        return dc(tl)
    t = tl.get('type')
    if t == 'function' and isinstance(tl.get('function'), dict):
        return rest(tl, D(tl['function']), ('type', 'function'))
    if t is None or t == 'function' or (t == 'custom' and 'input_schema' in tl):
        return D(tl)
    return rest(tl, {})


def strip_keys(v, names):
    if isinstance(v, list):
        return [strip_keys(e, names) for e in v]
    if isinstance(v, dict):
        return {k: strip_keys(e, names) for k, e in v.items() if k not in names}
    return v


# ---------------------------------------------------------------- options

def opt_value(name, v):
    if v is None:
        return ABSENT
    if name == 'temperature':
        return v if is_num(v) and v == 0 else ABSENT
    if name in ('stop', 'stop_sequences') and isinstance(v, str):
        return [v]
    if name in ('stream', 'background', 'logprobs') and v is False:
        return ABSENT
    if name == 'n' and is_num(v) and v == 1:
        return ABSENT
    if name == 'encoding_format' and v == 'float':
        return ABSENT
    if name == 'response_format' and isinstance(v, dict) and canonical(v) == b'{"type":"text"}':
        return ABSENT
    if name == 'stream_options' and isinstance(v, dict):
        o = {k: dc(e) for k, e in v.items() if e is not None and not (k == 'include_usage' and e is False)}
        return o if o else ABSENT
    if name == 'text' and isinstance(v, dict):
        o = {k: dc(e) for k, e in v.items()
             if e is not None and not (k == 'format' and isinstance(e, dict) and canonical(e) == b'{"type":"text"}')}
        return o if o else ABSENT
    return dc(v)


# ---------------------------------------------------------------- detection

CHAT_ARGS = ('functions', 'function_call', 'max_completion_tokens', 'response_format', 'n', 'logit_bias',
             'logprobs', 'top_logprobs', 'frequency_penalty', 'presence_penalty', 'reasoning_effort',
             'modalities', 'audio', 'prediction', 'seed', 'parallel_tool_calls', 'stream_options',
             'web_search_options')
CHAT_ROLES = ('system', 'developer', 'user', 'assistant', 'tool', 'function')


def detect(body):
    if not isinstance(body, dict):
        raise KeyError_('E_REQUEST', '$')
    if 'messages' not in body:
        if 'instructions' in body or 'previous_response_id' in body:
            return 'openai-responses'
        if 'input' in body:
            inp = body['input']
            ev = ('encoding_format' in body or 'dimensions' in body or isinstance(body.get('options'), dict))
            if not ev and isinstance(inp, list) and inp and all(
                    isinstance(e, str) or is_num(e) or (isinstance(e, list) and all(is_num(x) for x in e))
                    for e in inp):
                ev = True
            if not ev and isinstance(body.get('model'), str) and 'embed' in body['model'].lower():
                ev = True
            return 'openai-embeddings' if ev else 'openai-responses'
        if 'prompt' in body:
            return 'generic'
        raise KeyError_('E_REQUEST', '$')
    msgs = body['messages']
    if not isinstance(msgs, list):
        raise KeyError_('E_REQUEST', '$.messages')
    if isinstance(body.get('context'), dict) or isinstance(body.get('options'), dict):
        return 'generic'
    if any(k in body for k in ('system', 'stop_sequences', 'top_k', 'thinking')):
        return 'anthropic'
    tools = body.get('tools')
    if isinstance(tools, list) and any(isinstance(t, dict) and 'input_schema' in t for t in tools):
        return 'anthropic'
    for m in msgs:
        if isinstance(m, dict) and isinstance(m.get('content'), list):
            for b in m['content']:
                if not isinstance(b, dict):
                    continue
                bt = b.get('type')
                if bt in ('tool_use', 'tool_result', 'thinking', 'redacted_thinking'):
                    return 'anthropic'
                if bt in ('image', 'document') and isinstance(b.get('source'), dict):
                    return 'anthropic'
    if any(k in body for k in CHAT_ARGS):
        return 'openai-chat'
    if isinstance(tools, list) and any(isinstance(t, dict) and t.get('type') == 'function'
                                       and isinstance(t.get('function'), dict) for t in tools):
        return 'openai-chat'
    for m in msgs:
        if isinstance(m, dict):
            if any(k in m for k in ('tool_calls', 'tool_call_id', 'function_call')):
                return 'openai-chat'
            if isinstance(m.get('content'), list):
                for b in m['content']:
                    if isinstance(b, dict) and b.get('type') in ('image_url', 'input_audio', 'file'):
                        return 'openai-chat'
    if all(isinstance(m, dict) and isinstance(m.get('role'), str) and m['role'] in CHAT_ROLES for m in msgs):
        return 'openai-chat'
    return 'generic'


# ---------------------------------------------------------------- the request view

def check_options(opts):
    if 'provider' in opts and opts['provider'] not in PROVIDERS:
        raise KeyError_('E_ARG')
    for k in ('ignoreArgs', 'volatileKeys'):
        if k not in opts:
            continue
        v = opts[k]
        if not isinstance(v, list) or not all(isinstance(e, str) for e in v):
            raise KeyError_('E_ARG')


def normalize(body, opts):
    check_options(opts)
    provider = opts['provider'] if 'provider' in opts else detect(body)
    if not isinstance(body, dict):
        raise KeyError_('E_REQUEST', '$')
    ignore = set(opts.get('ignoreArgs') or [])
    volatile = set(opts.get('volatileKeys') or [])

    def get(name):
        if name in ignore or name not in body:
            return ABSENT
        return body[name]

    # Step 4: options.
    skip = set(LAYOUT[provider]) | DROPPED_ARGS | ignore
    options = {}
    for k, v in body.items():
        if k in skip:
            continue
        val = opt_value(k, v)
        if val is not ABSENT:
            options[k] = val
    if provider in ('generic', 'openai-embeddings'):
        o = get('options')
        if isinstance(o, dict):
            for k, v in o.items():
                if k in DROPPED_ARGS or k in ignore:
                    continue
                val = opt_value(k, v)
                if val is ABSENT:
                    options.pop(k, None)
                else:
                    options[k] = val

    # Step 5: model.
    view = {}
    m = get('model')
    if m is not ABSENT and m is not None:
        if isinstance(m, dict) and isinstance(m.get('modelId'), str):
            view['model'] = m['modelId']
        else:
            view['model'] = dc(m)

    # Step 6: embeddings.
    if provider == 'openai-embeddings':
        inp = get('input')
        if inp is ABSENT or inp is None:
            inputs = []
        elif isinstance(inp, list) and not all(is_num(e) for e in inp):
            inputs = dc(inp)
        else:
            inputs = [dc(inp)]
        view['input'] = inputs
        view['options'] = options
        return provider, view, inputs, [], []

    # Step 7: messages.
    ids = Ids()
    sys_name = 'instructions' if provider == 'openai-responses' else 'system'
    sysv = get(sys_name)
    sys_parts = C(None if sysv is ABSENT else sysv, ids)
    msgs = []  # (message, from_function_call)
    if provider == 'openai-responses':
        inp = get('input')
        if inp is ABSENT or inp is None:
            pass
        elif isinstance(inp, str):
            msgs.append(message({'role': 'user', 'content': inp}, '$.input', ids))
        elif isinstance(inp, list):
            for i, e in enumerate(inp):
                msgs.append(message(e, '$.input[%d]' % i, ids))
        else:
            raise KeyError_('E_REQUEST', '$.input')
    else:
        ms = get('messages')
        if ms is ABSENT and (provider == 'generic' or 'messages' in ignore):
            ms = []
        if not isinstance(ms, list):
            raise KeyError_('E_REQUEST', '$.messages')
        for i, e in enumerate(ms):
            msgs.append(message(e, '$.messages[%d]' % i, ids))
        if provider == 'generic':
            pr = get('prompt')
            if pr is ABSENT or pr is None:
                pass
            elif isinstance(pr, str):
                msgs.append(message({'role': 'user', 'content': pr}, '$.prompt', ids))
            elif isinstance(pr, list):
                for i, e in enumerate(pr):
                    msgs.append(message(e, '$.prompt[%d]' % i, ids))
            else:
                raise KeyError_('E_REQUEST', '$.prompt')
    if provider == 'openai-responses':
        joined = []
        for mm, from_fc in msgs:
            if from_fc and joined and isinstance(joined[-1], dict) and joined[-1].get('role') == 'assistant' \
                    and isinstance(joined[-1].get('content'), list):
                joined[-1]['content'].extend(mm['content'])
            else:
                joined.append(mm)
        messages = joined
    else:
        messages = [mm for mm, _ in msgs]
    messages = split_tool_results(messages)
    if sys_parts:
        messages.insert(0, {'role': 'system', 'content': sys_parts})

    # Step 8: tools.
    tools = []
    tv = get('tools')
    if tv is ABSENT or tv is None:
        pass
    elif isinstance(tv, list):
        tools += [tool(t) for t in tv]
    elif isinstance(tv, dict):
        for name, t in tv.items():
            if isinstance(t, dict):
                entry = {'name': name}
                entry.update(t)
                tools.append(tool(entry))
            else:
                tools.append(tool(t))
    else:
        raise KeyError_('E_REQUEST', '$.tools')
    fv = get('functions')
    if fv is ABSENT or fv is None:
        pass
    elif isinstance(fv, list):
        for f in fv:
            t = tool(f)
            if isinstance(t, dict):
                t['legacy'] = True
            tools.append(t)
    else:
        raise KeyError_('E_REQUEST', '$.functions')

    # Step 9: volatileKeys.
    if volatile:
        messages = strip_keys(messages, volatile)
        tools = strip_keys(tools, volatile)

    # Step 10: sort tools.
    tools.sort(key=lambda t: (utf16_key(t['name']) if isinstance(t, dict) and isinstance(t.get('name'), str) else b'',
                              canonical(t)))
    names = sorted({t['name'] for t in tools if isinstance(t, dict) and isinstance(t.get('name'), str)},
                   key=utf16_key)
    ctx = get('context')
    context_keys = sorted(ctx.keys(), key=utf16_key) if isinstance(ctx, dict) else []
    view['messages'] = messages
    view['tools'] = tools
    view['options'] = options
    return provider, view, messages, names, context_keys


def request_keys(body, opts):
    provider, view, msgs, names, ctx = normalize(body, opts)
    key = digest(view)
    mh = [digest(m) for m in msgs]
    ph = []
    for i, h in enumerate(mh):
        ph.append(h if i == 0 else sha_hex((ph[-1] + ':' + h).encode('ascii')))
    sig = {'toolNames': names, 'messageCount': len(msgs), 'contextKeys': ctx}
    return {'provider': provider, 'key': key, 'view': view, 'messageHashes': mh, 'pathHashes': ph,
            'signature': sig, 'signatureDigest': digest(sig)}


def run_case(case):
    opts = case.get('options') or {}
    try:
        if 'body' in case and isinstance(case['body'], str):
            body = parse_ijson(case['body'])
        else:
            body = case.get('bodyValue', case.get('body'))
        return request_keys(body, opts)
    except KeyError_ as e:
        r = {'error': e.code}
        if e.path:
            r['path'] = e.path
        return r


def view_text(view):
    return canonical(view).decode('utf-8')


def main(argv):
    if len(argv) >= 2 and argv[0] == '--vectors':
        return vectors(argv[1])
    cases = json.load(open(argv[0], encoding='utf-8'))
    res = []
    for c in cases:
        r = run_case(c)
        if 'view' in r:
            r['view'] = view_text(r['view'])
        res.append(r)
    text = json.dumps(res, ensure_ascii=True)
    if len(argv) > 1:
        open(argv[1], 'w', encoding='utf-8').write(text)
    else:
        sys.stdout.write(text)
    return 0


def vectors(path):
    data = json.load(open(path, encoding='utf-8'))
    return compare_vectors(data['vectors'])


def compare_vectors(vs, verbose=True):
    """A vector agrees when the provider, canonical view, key, message and path hashes and
    signature are equal, or when both reject it with the same error code (and path, if given)."""
    stats = {}
    fails = []
    for i, v in enumerate(vs):
        case = {'options': v.get('options') or {}}
        if 'bodyText' in v:
            case['body'] = v['bodyText']
        else:
            case['bodyValue'] = v.get('body')
        got = run_case(case)
        shape = v['expect']['provider'] if 'expect' in v else 'error ' + v['error']
        why = agree_vector(got, v)
        s = stats.setdefault(shape, [0, 0])
        s[0] += why is None
        s[1] += 1
        if why is not None:
            fails.append((i, v.get('name'), why))
    tot = [sum(s[0] for s in stats.values()), sum(s[1] for s in stats.values())]
    if verbose:
        for k in sorted(stats):
            print('%-28s %d/%d' % (k, stats[k][0], stats[k][1]))
        print('%-28s %d/%d' % ('total', tot[0], tot[1]))
        for f in fails:
            print('FAIL', f)
    return 0 if tot[0] == tot[1] else 1


def agree_vector(got, v):
    if 'error' in v:
        if got.get('error') != v['error']:
            return 'error %s vs expected %s' % (got.get('error') or 'none', v['error'])
        if v.get('path') and got.get('path') != v['path']:
            return 'path %s vs expected %s' % (got.get('path'), v['path'])
        return None
    exp = v['expect']
    if 'error' in got:
        return 'error %s %s' % (got['error'], got.get('path'))
    if got['provider'] != exp['provider']:
        return 'provider %s vs %s' % (got['provider'], exp['provider'])
    vt = view_text(got['view'])
    if vt != exp['view']:
        return 'view\n  got %s\n  exp %s' % (vt, exp['view'])
    for k in ('key', 'messageHashes', 'pathHashes', 'signature', 'signatureDigest'):
        if got[k] != exp[k]:
            return k
    return None


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
