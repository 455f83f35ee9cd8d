#!/usr/bin/env python3
"""Independent reference for the AWS Bedrock Runtime request keys (docs/hash-spec.md, "AWS
Bedrock Runtime"), on top of scripts/reference-key.py (the chat-family rules, which Converse
bodies are translated into). Standard library only.

    python3 scripts/reference-key-bedrock.py              # writes test/vectors/request-keys-bedrock.json
    python3 scripts/reference-key-bedrock.py --out FILE   # writes elsewhere (the test compares)
"""
import base64
import importlib.util
import json
import os
import re
import sys
from urllib.parse import unquote_to_bytes

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location('reference_key', os.path.join(HERE, 'reference-key.py'))
ref = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ref)
KeyError_ = ref.KeyError_
is_obj = ref.is_obj

ROUTES = [
    ('converse', 'bedrock-converse', False),
    ('converse-stream', 'bedrock-converse', True),
    ('invoke', 'bedrock-invoke', False),
    ('invoke-with-response-stream', 'bedrock-invoke', True),
]


def decode_uri_component(s):
    """decodeURIComponent, or the text as written when an escape is malformed."""
    if re.search(r'%(?![0-9A-Fa-f]{2})', s):
        return s
    try:
        return unquote_to_bytes(s).decode('utf-8')
    except UnicodeDecodeError:
        return s


def route_of(endpoint):
    if not endpoint or (endpoint.get('method') or 'POST').upper() != 'POST':
        return None
    path = endpoint['url'].split('?', 1)[0]
    for op, shape, stream in ROUTES:
        m = re.search(r'/model/([^/]+)/' + re.escape(op) + '$', path)
        if m:
            return {'shape': shape, 'stream': stream, 'model': decode_uri_component(m.group(1))}
    return None


IMAGE = {'jpg': 'image/jpeg', 'jpeg': 'image/jpeg'}
VIDEO = {'mkv': 'video/x-matroska', 'mov': 'video/quicktime', 'three_gp': 'video/3gpp', 'flv': 'video/x-flv', 'wmv': 'video/x-ms-wmv', 'mpg': 'video/mpeg'}
AUDIO = {'mp3': 'audio/mpeg', 'mpeg': 'audio/mpeg', 'm4a': 'audio/mp4'}
DOCUMENT = {
    'pdf': 'application/pdf', 'csv': 'text/csv', 'doc': 'application/msword',
    'docx': 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
    'xls': 'application/vnd.ms-excel',
    'xlsx': 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
    'html': 'text/html', 'txt': 'text/plain', 'md': 'text/markdown',
}
TABLES = {'image': IMAGE, 'video': VIDEO, 'audio': AUDIO, 'document': DOCUMENT}


def M(kind, fmt):
    if not isinstance(fmt, str) or fmt == '':
        return None
    f = fmt.lower()
    if f in TABLES[kind]:
        return TABLES[kind][f]
    return ('application/' if kind == 'document' else kind + '/') + f


def S(src, mt):
    if not is_obj(src):
        return src
    if src.get('bytes') is not None:
        out = {'type': 'base64'}
        if mt:
            out['media_type'] = mt
        out['data'] = src['bytes']
        return out
    if is_obj(src.get('s3Location')) and isinstance(src['s3Location'].get('uri'), str):
        return {'type': 'url', 'url': src['s3Location']['uri']}
    if isinstance(src.get('text'), str):
        return {'type': 'text', 'media_type': 'text/plain', 'data': src['text']}
    if isinstance(src.get('content'), list):
        return {'type': 'content', 'content': T(src['content'])}
    return src


def others(o, skip):
    return {k: v for k, v in o.items() if k not in skip}


def present(out, o, src_key, dst_key):
    if src_key in o:
        out[dst_key] = o[src_key]


DROP = object()


def BL(b):
    if not is_obj(b):
        return b
    keys = list(b.keys())
    if keys == ['cachePoint']:
        return DROP
    if keys == ['text'] and isinstance(b['text'], str):
        return {'type': 'text', 'text': b['text']}
    if is_obj(b.get('image')):
        return {'type': 'image', 'source': S(b['image'].get('source'), M('image', b['image'].get('format')))}
    if is_obj(b.get('document')):
        d = b['document']
        out = {'type': 'document', 'source': S(d.get('source'), M('document', d.get('format')))}
        present(out, d, 'name', 'filename')
        out.update(others(d, ('format', 'name', 'source')))
        return out
    for kind in ('video', 'audio'):
        if is_obj(b.get(kind)):
            m = b[kind]
            x = S(m.get('source'), M(kind, m.get('format')))
            return {'type': kind, kind: ref.A(x) if is_obj(x) else x}
    if is_obj(b.get('toolUse')):
        t = b['toolUse']
        out = {'type': 'tool_use'}
        present(out, t, 'toolUseId', 'id')
        present(out, t, 'name', 'name')
        present(out, t, 'input', 'input')
        out.update(others(t, ('toolUseId', 'name', 'input')))
        return out
    if is_obj(b.get('toolResult')):
        t = b['toolResult']
        out = {'type': 'tool_result'}
        present(out, t, 'toolUseId', 'tool_use_id')
        if isinstance(t.get('content'), list):
            out['content'] = T(t['content'])
        else:
            present(out, t, 'content', 'content')
        if t.get('status') == 'error':
            out['is_error'] = True
        out.update(others(t, ('toolUseId', 'content', 'status')))
        return out
    if keys == ['json']:
        return {'type': 'json', 'json': b['json']}
    if is_obj(b.get('reasoningContent')):
        r = b['reasoningContent']
        if is_obj(r.get('reasoningText')):
            out = {'type': 'thinking'}
            present(out, r['reasoningText'], 'text', 'thinking')
            present(out, r['reasoningText'], 'signature', 'signature')
            return out
        if 'redactedContent' in r:
            return {'type': 'redacted_thinking', 'data': r['redactedContent']}
    return b


def T(v):
    if not isinstance(v, list):
        return v
    return [x for x in (BL(b) for b in v) if x is not DROP]


def TL(t):
    if not is_obj(t):
        return t
    if list(t.keys()) == ['cachePoint']:
        return DROP
    if not is_obj(t.get('toolSpec')):
        return t
    s = t['toolSpec']
    out = {}
    present(out, s, 'name', 'name')
    present(out, s, 'description', 'description')
    if is_obj(s.get('inputSchema')) and 'json' in s['inputSchema']:
        out['input_schema'] = s['inputSchema']['json']
    else:
        present(out, s, 'inputSchema', 'input_schema')
    out.update(others(s, ('name', 'description', 'inputSchema')))
    return out


CONVERSE_DROPPED = {'requestMetadata', 'performanceConfig', 'serviceTier', 'modelId'}
RESERVED = {'model', 'tools', 'functions', 'context', 'stream'}
CONVERSE_ONLY = ['inferenceConfig', 'toolConfig', 'additionalModelRequestFields', 'guardrailConfig', 'promptVariables', 'additionalModelResponseFieldPaths']


def inference_config(v, ignore):
    if not is_obj(v):
        return v
    out = {}
    for k, x in v.items():
        if k in ignore or x is None:
            continue
        if k == 'temperature':
            x = ref.option_value('temperature', x)
            if x is ref._NONE:
                continue
        out[k] = x
    return out or ref._NONE


def converse_body(body, model, stream, ignore):
    out = {}
    if model is not None:
        out['model'] = model
    for k, v in body.items():
        if k in ignore or k in CONVERSE_DROPPED:
            continue
        if k == 'messages':
            out['messages'] = [dict(m, content=T(m['content'])) if is_obj(m) and 'content' in m else m for m in v] if isinstance(v, list) else v
        elif k == 'system':
            out['system'] = T(v)
        elif k == 'toolConfig' and is_obj(v):
            if isinstance(v.get('tools'), list):
                out['tools'] = [x for x in (TL(t) for t in v['tools']) if x is not DROP]
            for ck, cv in v.items():
                if ck != 'tools' and ck not in ignore:
                    out[ck] = cv
        elif k == 'inferenceConfig':
            ic = inference_config(v, ignore)
            if ic is not ref._NONE:
                out['inferenceConfig'] = ic
        else:
            out['converse.' + k if k in RESERVED else k] = v
    if stream:
        out['stream'] = True
    return out


def looks_converse(body):
    if 'messages' in body and not isinstance(body['messages'], list):
        return False
    if any(k in body for k in CONVERSE_ONLY):
        return True
    return isinstance(body.get('modelId'), str) and isinstance(body.get('messages'), list)


def user_opts(opts):
    out = {'provider': 'anthropic'}
    if opts.get('volatileKeys'):
        out['volatileKeys'] = opts['volatileKeys']
    return out


def normalize_converse(body, route, opts):
    ignore = set(opts.get('ignoreArgs', []))
    if not is_obj(body):
        raise KeyError_('E_REQUEST', '$')
    if not isinstance(body.get('messages'), list) and 'messages' not in ignore:
        raise KeyError_('E_REQUEST', '$.messages')
    model = None
    if 'model' not in ignore:
        model = route['model'] if route else body.get('modelId')
    return ref.normalize(converse_body(body, model, route is not None and route['stream'], ignore), user_opts(opts))


def normalize_bedrock(body, opts):
    """(provider, view, messages, tool names, context keys) as reference-key.normalize gives them."""
    rest = {k: v for k, v in opts.items() if k != 'endpoint'}
    # A `provider` option wins over the route, which then gives no model (as the registry does).
    route = None if 'provider' in opts else route_of(opts.get('endpoint'))
    shape = rest.pop('provider', None) if rest.get('provider') in ('bedrock-converse', 'bedrock-invoke') else None
    if route is None and shape is None:
        return ref.normalize(body, rest)
    if (route['shape'] if route else shape) == 'bedrock-converse':
        return ('bedrock-converse',) + normalize_converse(body, route, rest)[1:]
    if is_obj(body) and 'anthropic_version' not in body and looks_converse(body):
        return ('bedrock-invoke',) + normalize_converse(body, route, rest)[1:]
    ignore = set(rest.get('ignoreArgs', []))
    b = body
    if is_obj(body):
        b = dict(body)
        if route and 'model' not in ignore:
            b['model'] = route['model']
        if route and route['stream']:
            b['stream'] = True
    o = {}
    if rest.get('volatileKeys'):
        o['volatileKeys'] = rest['volatileKeys']
    if rest.get('ignoreArgs'):
        o['ignoreArgs'] = rest['ignoreArgs']
    if is_obj(body) and isinstance(body.get('anthropic_version'), str):
        o['provider'] = 'anthropic'
    return ('bedrock-invoke',) + ref.normalize(b, o)[1:]


def request_keys(body, opts):
    provider, view, items, names, ckeys = normalize_bedrock(body, opts or {})
    text = ref.canonical(view)
    ms, ps = ref.path_hashes(items)
    sig = {'toolNames': names, 'messageCount': float(len(items)), 'contextKeys': ckeys}
    return {
        'provider': provider,
        'view': text.decode('utf-8'),
        'key': ref.sha_hex(text),
        'messageHashes': ms,
        'pathHashes': ps,
        'signature': {'toolNames': names, 'messageCount': len(items), 'contextKeys': ckeys},
        'signatureDigest': ref.digest(sig),
    }


def main():
    sys.path.insert(0, HERE)
    from request_key_cases_bedrock import cases  # noqa: E402

    out_path = os.path.join(HERE, '..', 'test', 'vectors', 'request-keys-bedrock.json')
    if '--out' in sys.argv:
        out_path = sys.argv[sys.argv.index('--out') + 1]
    vectors = []
    for c in cases():
        v = {'name': c['name'], 'rules': c['rules'], 'body': c['body'], 'options': c['options']}
        if 'same' in c:
            v['same'] = c['same']
        try:
            v['expect'] = request_keys(json.loads(json.dumps(c['body']), parse_int=float), c['options'])
        except KeyError_ as e:
            v['error'] = e.code
            if e.path:
                v['path'] = e.path
        vectors.append(v)
    doc = {
        'description': 'AWS Bedrock Runtime request key vectors (spec version 2), generated by scripts/reference-key-bedrock.py '
                       'from docs/hash-spec.md ("AWS Bedrock Runtime"). body + options (endpoint: the route) -> provider, canonical '
                       'view, key, message and path hashes, signature; or an error code. Vectors with the same `same` label are one '
                       'conversation in several shapes: their message and path hashes are equal.',
        'specVersion': 2,
        'count': len(vectors),
        'vectors': vectors,
    }
    ref.write_vectors(out_path, doc)


if __name__ == '__main__':
    main()
