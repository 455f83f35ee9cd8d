#!/usr/bin/env python3
"""Independent reference for the Ollama request shapes (docs/hash-spec.md, "Ollama shapes").

Written from that section alone: an Ollama body is rewritten as the chat completions (or
embeddings) body it stands for, which scripts/reference-key.py then keys by the chat rules. It
shares no code with src/providers/ollama.ts.

    python3 scripts/reference-key-ollama.py              # writes test/vectors/request-keys-ollama.json
    python3 scripts/reference-key-ollama.py --out FILE   # writes elsewhere
"""
import base64
import importlib.util
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location('reference_key', os.path.join(HERE, 'reference-key.py'))
ref = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ref)

RUNNER = {'numa', 'num_batch', 'num_gpu', 'main_gpu', 'low_vram', 'f16_kv', 'use_mmap', 'use_mlock', 'num_thread', 'vocab_only'}
RESERVED = {'model', 'messages', 'system', 'tools', 'functions', 'context', 'prompt', 'input', 'instructions', 'options', 'stream', 'ollama'}
SIGNATURES = [  # (offset, bytes, media type)
    (0, b'\x89PNG', 'image/png'),
    (0, b'\xff\xd8\xff', 'image/jpeg'),
    (0, b'GIF8', 'image/gif'),
]


def is_obj(v):
    return isinstance(v, dict)


def sniff(data):
    """The media type the decoded bytes' signature gives, from the first 24 base64 characters."""
    head = ''.join(c for c in data if c not in ' \t\n\f\r')[:24]
    head = head[:len(head) - len(head) % 4]
    try:
        b = base64.b64decode(head, validate=True)
    except Exception:
        return None
    for off, sig, mt in SIGNATURES:
        if b[off:off + len(sig)] == sig:
            return mt
    if b[0:4] == b'RIFF' and b[8:12] == b'WEBP':
        return 'image/webp'
    return None


def image(img):
    if not isinstance(img, str):
        return {'type': 'image', 'data': img}
    mt = None if img[:5].lower() == 'data:' else sniff(img)
    return {'type': 'image', 'data': img, 'media_type': mt} if mt else {'type': 'image', 'data': img}


def messages(ms):
    if not isinstance(ms, list):
        return ms
    out = []
    open_calls = []  # (id, name) of the last assistant turn's calls not answered yet
    n = 0
    for m in ms:
        if not is_obj(m):
            out.append(m)
            continue
        o = {k: v for k, v in m.items() if k not in ('content', 'images', 'thinking', 'tool_calls', 'tool_name')}
        parts = []
        th = m.get('thinking')
        if isinstance(th, str) and th != '':
            parts.append({'type': 'thinking', 'thinking': th})
        elif th is not None and th != '' and 'thinking' in m:
            o['thinking'] = th
        imgs = m.get('images')
        has_imgs = isinstance(imgs, list) and len(imgs) > 0
        c = m.get('content')
        if not parts and not has_imgs:
            if 'content' in m:
                o['content'] = c
        else:
            if isinstance(c, str):
                parts.append({'type': 'text', 'text': c})
            elif isinstance(c, list):
                parts.extend(c)
            elif c is not None:
                parts.append(c)
            if has_imgs:
                parts.extend(image(i) for i in imgs)
            o['content'] = parts
        if isinstance(m.get('tool_calls'), list):
            open_calls = []
            calls = []
            for c in m['tool_calls']:
                if not is_obj(c):
                    calls.append(c)
                    continue
                cid = c['id'] if c.get('id') is not None else '\u0000ollama-call-%d' % n
                if c.get('id') is None:
                    n += 1
                f = c['function'] if is_obj(c.get('function')) else {}
                open_calls.append((cid, f.get('name')))
                call = {'id': cid, 'type': 'function', 'function': {}}
                if 'name' in f:
                    call['function']['name'] = f['name']
                if 'arguments' in f:
                    call['function']['arguments'] = f['arguments']
                calls.append(call)
            o['tool_calls'] = calls
        name = m.get('tool_name')
        if m.get('role') == 'tool' and o.get('tool_call_id') is None:
            hit = next((i for i, (_, nm) in enumerate(open_calls) if name is None or nm == name), None)
            if hit is not None:
                o['tool_call_id'] = open_calls.pop(hit)[0]
            elif 'tool_name' in m:
                o['tool_name'] = name
        elif 'tool_name' in m and m.get('role') != 'tool':
            o['tool_name'] = name
        out.append(o)
    return out


def flatten(body, out):
    o = body.get('options')
    if o is None:
        return
    if not is_obj(o):
        out['options'] = o
        return
    nested = {}
    for k, v in o.items():
        if k in RUNNER:
            continue
        if k in RESERVED or k in out:
            nested[k] = v
        else:
            out[k] = v
    if nested:
        out['options'] = nested


def as_openai(endpoint, body):
    if not is_obj(body):
        return body
    out = {}
    if endpoint in ('embed', 'embeddings'):
        for k, v in body.items():
            if k not in ('options', 'prompt', 'keep_alive'):
                out[k] = v
        if endpoint == 'embeddings':
            out['input'] = [] if body.get('prompt') is None else [body['prompt']]
        elif 'input' not in out:
            out['input'] = []
        flatten(body, out)
        return out
    own = ('messages', 'options', 'stream', 'keep_alive') if endpoint == 'chat' else ('prompt', 'system', 'images', 'stream', 'options', 'keep_alive')
    moved = {}
    for k, v in body.items():
        if k in own:
            continue
        if k in ('system', 'functions', 'context', 'prompt', 'input', 'instructions', 'messages'):
            moved[k] = v
        else:
            out[k] = v
    if endpoint == 'chat':
        out['messages'] = messages(body['messages']) if 'messages' in body else []
    else:
        ms = []
        if body.get('system') not in (None, ''):
            ms.append({'role': 'system', 'content': body['system']})
        user = {'role': 'user', 'content': body['prompt'] if body.get('prompt') is not None else ''}
        if 'images' in body:
            user['images'] = body['images']
        ms.append(user)
        out['messages'] = messages(ms)
    if moved:
        out['ollama'] = moved
    flatten(body, out)
    if body.get('stream') is not False:
        out['stream'] = True
    return out


SHAPE = {'chat': 'ollama-chat', 'generate': 'ollama-generate', 'embed': 'ollama-embed', 'embeddings': 'ollama-embeddings'}


def request_keys(endpoint, body, opts=None):
    o = dict(opts or {})
    o['provider'] = 'openai-embeddings' if endpoint in ('embed', 'embeddings') else 'openai-chat'
    rec = ref.request_keys(as_openai(endpoint, body), o)
    rec['provider'] = SHAPE[endpoint]
    return rec


PNG = base64.b64encode(b'\x89PNG\r\n\x1a\n' + bytes(range(40))).decode('ascii')
JPEG = base64.b64encode(b'\xff\xd8\xff\xe0' + bytes(range(30))).decode('ascii')
WEATHER = {'type': 'function', 'function': {'name': 'get_weather', 'description': 'Weather', 'parameters': {'type': 'object', 'properties': {'city': {'type': 'string'}}}}}


def cases():
    out = []

    def add(name, endpoint, body, options=None, same_as=None):
        c = {'name': name, 'endpoint': endpoint, 'body': body}
        if options:
            c['options'] = options
        if same_as:
            c['sameAs'] = same_as
        out.append(c)

    chat = {'model': 'llama3.2', 'messages': [{'role': 'system', 'content': 'Be brief.'}, {'role': 'user', 'content': 'Weather in Paris?'}]}
    add('chat: streamed by default', 'chat', chat)
    add('chat: stream true is the default', 'chat', {**chat, 'stream': True})
    add('chat: stream false', 'chat', {**chat, 'stream': False})
    add('chat: keep_alive out', 'chat', {**chat, 'keep_alive': '5m', 'stream': False})
    add('chat: options deciding, runner options out, temperature only when 0', 'chat', {**chat, 'options': {'temperature': 0.8, 'seed': 42, 'num_ctx': 8192, 'num_thread': 8, 'num_gpu': 99, 'use_mmap': True, 'stop': '\n\n', 'top_k': 20}})
    add('chat: temperature 0 kept', 'chat', {**chat, 'options': {'temperature': 0}})
    add('chat: reserved option names stay nested', 'chat', {**chat, 'options': {'system': 'x', 'context': [1], 'seed': 1}, 'seed': 2})
    add('chat: options not an object', 'chat', {**chat, 'options': 'fast'})
    add('chat: format schema and think', 'chat', {**chat, 'format': {'type': 'object', 'properties': {'a': {'type': 'string'}}}, 'think': True})
    add('chat: format json', 'chat', {**chat, 'format': 'json', 'logprobs': True, 'top_logprobs': 2})
    add('chat: images by digest, media type sniffed', 'chat', {'model': 'llava', 'messages': [{'role': 'user', 'content': 'What is this?', 'images': [PNG, JPEG, 'aGVsbG8=']}]})
    add('chat: base64 with line breaks is the same image', 'chat', {'model': 'llava', 'messages': [{'role': 'user', 'content': 'What is this?', 'images': [PNG[:5] + '\r\n' + PNG[5:10] + ' \t' + PNG[10:], JPEG, 'aGVsbG8=']}]})
    add('chat: image without text', 'chat', {'model': 'llava', 'messages': [{'role': 'user', 'content': '', 'images': [PNG]}]})
    add('chat: thinking part first', 'chat', {'model': 'qwen3', 'messages': [{'role': 'user', 'content': 'q'}, {'role': 'assistant', 'content': 'a', 'thinking': 'hm'}]})
    tools = {'model': 'llama3.2', 'tools': [WEATHER], 'messages': [
        {'role': 'user', 'content': 'Weather in Paris and Rome?'},
        {'role': 'assistant', 'content': '', 'tool_calls': [
            {'function': {'name': 'get_weather', 'arguments': {'city': 'Paris'}}},
            {'function': {'index': 1, 'name': 'get_weather', 'arguments': {'city': 'Rome'}}}]},
        {'role': 'tool', 'content': '18C', 'tool_name': 'get_weather'},
        {'role': 'tool', 'content': '21C', 'tool_name': 'get_weather'},
        {'role': 'user', 'content': 'Thanks'}]}
    add('chat: tool calls get positional ids, results link by tool_name', 'chat', tools)
    add('chat: a tool result naming no open call keeps tool_name', 'chat', {'model': 'llama3.2', 'messages': [
        {'role': 'assistant', 'content': '', 'tool_calls': [{'function': {'name': 'a', 'arguments': {}}}]},
        {'role': 'tool', 'content': 'x', 'tool_name': 'b'},
        {'role': 'tool', 'content': 'y'}]})
    add('chat: null tool_call_id links by name; a tool_call_id drops tool_name', 'chat', {'model': 'llama3.2', 'messages': [
        {'role': 'assistant', 'content': '', 'tool_calls': [{'function': {'name': 'a', 'arguments': {}}}, {'function': {'name': 'b', 'arguments': {}}}]},
        {'role': 'tool', 'content': 'x', 'tool_name': 'b', 'tool_call_id': None},
        {'role': 'tool', 'content': 'y', 'tool_name': 'zzz', 'tool_call_id': 'given'},
        {'role': 'user', 'content': 'z', 'tool_name': 'kept'}]})
    add('chat: tool calls with ids (newer servers)', 'chat', {'model': 'llama3.2', 'messages': [
        {'role': 'assistant', 'content': '', 'tool_calls': [{'id': 'call_x', 'function': {'name': 'a', 'arguments': {'k': 1}}}]},
        {'role': 'tool', 'content': 'x', 'tool_call_id': 'call_x'}]})
    add('chat: ignoreArgs and volatileKeys', 'chat', {**chat, 'options': {'seed': 3, 'num_predict': 10}}, {'ignoreArgs': ['num_predict'], 'volatileKeys': ['content']})
    add('chat: no messages', 'chat', {'model': 'llama3.2'})
    add('chat: not an object', 'chat', [1])

    add('generate: system and prompt as messages', 'generate', {'model': 'qwen3', 'system': 'Be brief.', 'prompt': 'Why is the sky blue?'})
    add('generate: raw, template, suffix, context decide', 'generate', {'model': 'qwen3', 'prompt': 'def f(', 'suffix': '    return x', 'raw': True, 'template': '{{ .Prompt }}', 'context': [1, 2, 3], 'stream': False, 'keep_alive': 0})
    add('chat: members the chat layout reads are keyed under ollama', 'chat', {**chat, 'system': 'not the prompt', 'context': {'a': 1}})
    add('generate: images', 'generate', {'model': 'llava', 'prompt': 'Describe', 'images': [PNG]})
    add('generate: empty prompt loads the model', 'generate', {'model': 'qwen3'})

    add('embed: list input', 'embed', {'model': 'nomic-embed-text', 'input': ['a', 'b'], 'keep_alive': '1m', 'truncate': False, 'options': {'num_thread': 4, 'num_ctx': 2048}})
    add('embed: string input is a batch of one', 'embed', {'model': 'nomic-embed-text', 'input': 'a', 'dimensions': 256})
    add('embeddings: legacy prompt', 'embeddings', {'model': 'nomic-embed-text', 'prompt': 'a'})

    # The same conversations in OpenAI chat shape: the message and path hashes must be equal.
    add('cross: openai chat of the tools conversation', 'openai', {'model': 'llama3.2', 'tools': [WEATHER], 'messages': [
        {'role': 'user', 'content': 'Weather in Paris and Rome?'},
        {'role': 'assistant', 'content': None, 'tool_calls': [
            {'id': 'call_p', 'type': 'function', 'function': {'name': 'get_weather', 'arguments': '{"city":"Paris"}'}},
            {'id': 'call_r', 'type': 'function', 'function': {'name': 'get_weather', 'arguments': '{"city":"Rome"}'}}]},
        {'role': 'tool', 'tool_call_id': 'call_p', 'content': '18C'},
        {'role': 'tool', 'tool_call_id': 'call_r', 'content': '21C'},
        {'role': 'user', 'content': 'Thanks'}]}, same_as='chat: tool calls get positional ids, results link by tool_name')
    add('cross: openai chat of the image message', 'openai', {'model': 'llava', 'messages': [{'role': 'user', 'content': [
        {'type': 'text', 'text': 'What is this?'},
        {'type': 'image_url', 'image_url': {'url': 'data:image/png;base64,' + PNG}},
        {'type': 'image_url', 'image_url': {'url': 'data:image/jpeg;base64,' + JPEG}},
        {'type': 'image', 'source': {'type': 'base64', 'data': 'aGVsbG8='}}]}]}, same_as='chat: images by digest, media type sniffed')
    add('cross: anthropic of the thinking conversation', 'openai', {'model': 'qwen3', 'max_tokens': 10, 'messages': [{'role': 'user', 'content': 'q'}, {'role': 'assistant', 'content': [{'type': 'thinking', 'thinking': 'hm', 'signature': 'sig'}, {'type': 'text', 'text': 'a'}]}]}, same_as='chat: thinking part first')
    add('cross: openai chat of generate', 'openai', {'model': 'qwen3', 'messages': [{'role': 'system', 'content': 'Be brief.'}, {'role': 'user', 'content': 'Why is the sky blue?'}]}, same_as='generate: system and prompt as messages')
    return out


def main():
    out_path = os.path.join(HERE, '..', 'test', 'vectors', 'request-keys-ollama.json')
    if '--out' in sys.argv:
        out_path = sys.argv[sys.argv.index('--out') + 1]
    vectors = []
    for c in cases():
        v = dict(c)
        body = json.loads(json.dumps(c['body']), parse_int=float)
        try:
            if c['endpoint'] == 'openai':
                v['expect'] = ref.request_keys(body, c.get('options'))
            else:
                v['expect'] = request_keys(c['endpoint'], body, c.get('options'))
        except ref.KeyError_ as e:
            v['error'] = e.code
        vectors.append(v)
    doc = {
        'description': 'Request key vectors for the Ollama shapes (/api/chat, /api/generate, /api/embed, /api/embeddings), generated '
                       'by scripts/reference-key-ollama.py from docs/hash-spec.md ("Ollama shapes") on top of scripts/reference-key.py. '
                       'endpoint + body + options -> provider, canonical view, key, message and path hashes; "openai" entries are the '
                       'same conversation in another shape, whose message and path hashes equal those of the entry named by sameAs.',
        'count': len(vectors),
        'vectors': vectors,
    }
    ref.write_vectors(out_path, doc)


if __name__ == '__main__':
    main()
