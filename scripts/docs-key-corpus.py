#!/usr/bin/env python3
"""Generates request bodies of every shape tapedeck keys (realistic ones and edge cases),
deterministically from a seed, for scripts/docs-key-check.mjs.

  python3 scripts/docs-key-corpus.py [COUNT] [SEED] > cases.json

Each case is { "shape": <what the generator meant to build>, "body": <JSON text>, "options": {...} }.
The shape is a label for the agreement table only; the key does not use it.
"""
import base64
import json
import random
import sys

sys.setrecursionlimit(20000)

COUNT = int(sys.argv[1]) if len(sys.argv) > 1 else 6000
SEED = int(sys.argv[2]) if len(sys.argv) > 2 else 20261123
R = random.Random(SEED)


def pick(*xs):
    return R.choice(xs)


def maybe(p=0.5):
    return R.random() < p


TEXTS = ['hi', 'Weather in Paris?', '', ' padded ', 'é', 'A\u030a', '😂 emoji', 'line\nbreak', 'tab\t"quote"\\',
         '\u2028sep', 'ctrl\u0001\u001f', '\u007f', '\ufb33', 'long ' * 20, '0', 'null']
IDS = ['call_a', 'call_b', 'toolu_01', 'toolu_02', 'fc_1', 1, '1', 2, None, 'call_a']
NAMES = ['get_weather', 'search', 'b', 'a', 'Zeta', 'émoji', '😂', '\ufb33', '', None, 'get_weather']
PNG = bytes(range(0, 256, 7))


def number():
    k = R.random()
    if k < 0.3:
        return R.uniform(-1, 1) * 10 ** R.randint(-30, 30)
    if k < 0.5:
        return R.choice([2 ** 53 + 1, -(2 ** 63), 10 ** 21, 10 ** 21 - 1, 123456789012345678901234567890])
    if k < 0.7:
        return R.choice([5e-324, 1.7976931348623157e308, 1e-7, 1e-6, 0.1 + 0.2, 100.0, 1e21, 1e20, -0.0])
    return R.randint(-1000, 1000) / R.choice([1, 8, 10, 3])


def nest(n):
    v = 'x'
    for _ in range(n):
        v = [v] if maybe(0.5) else {'k': v}
    return v


def text():
    return R.choice(TEXTS)


def b64(data, variant=None):
    s = base64.b64encode(data).decode()
    v = variant or pick('plain', 'plain', 'nopad', 'urlsafe', 'wrapped', 'spaces', 'bad', 'len1', 'dbl')
    if v == 'nopad':
        return s.rstrip('=')
    if v == 'urlsafe':
        return base64.urlsafe_b64encode(data).decode()
    if v == 'wrapped':
        return '\n'.join(s[i:i + 8] for i in range(0, len(s), 8)) + '\r\n'
    if v == 'spaces':
        return ' ' + s[:4] + ' \t' + s[4:] + '\f'
    if v == 'bad':
        return s[:5] + '*' + s[5:]
    if v == 'len1':
        return 'QUJDR'
    if v == 'dbl':
        return s + '=='
    return s


def data_url():
    mt = pick('image/png', 'IMAGE/PNG ', 'image/png;charset=UTF-8', '', 'text/plain;x=1', ' application/pdf ')
    d = R.choice([PNG, b'hello', b''])
    v = pick('b64', 'b64', 'B64UPPER', 'pct', 'plain', 'nocomma', 'upper', 'b64pct', 'b64bad')
    if v == 'b64':
        return 'data:%s;base64,%s' % (mt, b64(d, pick('plain', 'nopad', 'urlsafe')))
    if v == 'B64UPPER':
        return 'data:%s; BASE64 ,%s' % (mt, b64(d, 'plain'))
    if v == 'pct':
        return 'data:%s,%s' % (mt, pick('hello%20world', '%E2%82%AC', '%zz%4', 'a,b', 'é'))
    if v == 'plain':
        return 'data:,' + pick('A brief note', '', 'x%41y')
    if v == 'nocomma':
        return 'data:image/png;base64'
    if v == 'upper':
        return 'DATA:%s;base64,%s' % (mt, b64(d, 'plain'))
    if v == 'b64pct':
        return 'data:%s;base64,%s' % (mt, pick('aGVs%62G8=', 'aGVsbG8%3D', '%FF%FEab'))
    return 'data:%s;base64,%s' % (mt, b64(d, 'bad'))


def url_or_path():
    return pick('https://example.com/a.png', 'HTTP://Example.com/A.png?x=1', 'ftp+x.y://h/p', 's3://bucket/k',
                'file.png', '/tmp/file.pdf', 'C:\\img.png', 'mailto:x@y', data_url(), b64(PNG))


def attachment_obj():
    o = {}
    k = pick('data', 'data', 'file_data', 'url', 'file_url', 'image_url', 'path', 'file_id', 'fileId', 'sha256',
             'textSha256', 'textdata', 'none')
    if k == 'data':
        o['data'] = pick(b64(PNG), data_url(), 'not base64!!', '')
    elif k == 'file_data':
        o['file_data'] = pick(b64(b'%PDF-1.4'), data_url())
    elif k in ('url', 'file_url', 'image_url'):
        o[k] = url_or_path()
    elif k == 'path':
        o['path'] = pick('a.png', '/x/y.pdf')
    elif k in ('file_id', 'fileId'):
        o[k] = pick('file-abc', 'file-xyz')
    elif k == 'sha256':
        o['sha256'] = 'ab' * 32
    elif k == 'textSha256':
        o['textSha256'] = 'cd' * 32
    elif k == 'textdata':
        o['type'] = 'text'
        o['data'] = text()
    else:
        o['kind'] = 'opaque'
    if maybe(0.6):
        mk = pick('media_type', 'mediaType', 'mime_type', 'mimeType')
        o[mk] = pick('image/png', 'Image/PNG; charset=x', ' ', 'application/pdf', None, 5)
    if maybe(0.2):
        o[pick('media_type', 'mediaType')] = pick('text/plain', None)
    return o


def args_text():
    return pick('{"city":"Paris"}', ' { "city" : "Paris" , "n": 1.0 } ', '{"a":1,"a":2}', '{"a":"\\ud800"}',
                '{"a":1e400}', 'not json', 'null', '', '[]', '{}', '"str"', '{"n":1E2,"z":-0}', '{"a":[1,2,{"b":null}]}',
                '{"nonce":"x","timestamp":5}', '{"a":"\\u0041"}', '1', '{"a":1}  x', 'NaN', '[' * 3 + ']' * 3,
                '[' * 505 + ']' * 505, '[' * 512 + ']' * 512, '[' * 513 + ']' * 513, '{"a":1.0E+2,"b":0.70,"c":-0.0}',
                '\ufeff{}', '{"a":"\\ud83d\\ude02"}', '{"a":"\\udc00"}', '{"a\\u0000":1}', ' \t\n{}\r')


def args_any():
    return pick(args_text(), args_text(), {'city': 'Paris'}, None, [], 5, {'nonce': 1, 'q': 'x'}, True)


def cache_control(o):
    if maybe(0.15):
        o['cache_control'] = {'type': 'ephemeral'}
    return o


def noise(o):
    # members the normalizer drops or keeps as given
    if maybe(0.1):
        o[pick('id', 'status', 'timestamp', 'created_at', 'createdAt', 'updatedAt', 'request_id')] = pick('x1', 5)
    if maybe(0.1):
        o[pick('refusal', 'annotations', 'extra', 'name', 'nonce')] = pick(None, [], 'v', {'k': None})
    return o


# ----------------------------------------------------------------- parts

def text_part():
    t = pick('text', 'text', 'input_text', 'output_text')
    p = {'type': t}
    if maybe(0.9):
        p['text'] = pick(text(), None, '', 5)
    if maybe(0.1):
        p['annotations'] = pick([], [{'type': 'url_citation'}])
    return cache_control(p)


def image_url_part():
    iu = pick(url_or_path(), {'url': url_or_path()}, {'url': url_or_path(), 'detail': pick('low', 'high', None)},
              {'detail': 'auto'}, None, 5)
    return {'type': 'image_url', 'image_url': iu}


def input_image_part():
    p = {'type': 'input_image'}
    k = pick('image_url', 'file_id', 'both', 'none')
    if k in ('image_url', 'both'):
        p['image_url'] = url_or_path()
    if k in ('file_id', 'both'):
        p['file_id'] = 'file-img'
    if maybe(0.5):
        p['detail'] = pick('auto', 'low', None)
    return p


def image_part():
    p = {'type': 'image'}
    k = pick('source_b64', 'source_url', 'source_file', 'image_str', 'image_obj', 'flat', 'none')
    if k == 'source_b64':
        p['source'] = {'type': 'base64', 'media_type': pick('image/png', 'image/jpeg'), 'data': b64(PNG)}
    elif k == 'source_url':
        p['source'] = {'type': 'url', 'url': url_or_path()}
    elif k == 'source_file':
        p['source'] = {'type': 'file', 'file_id': 'file-1'}
    elif k == 'image_str':
        p['image'] = url_or_path()
        if maybe(0.5):
            p['mediaType'] = pick('image/png', 'IMAGE/JPEG')
    elif k == 'image_obj':
        p['image'] = attachment_obj()
    elif k == 'flat':
        p.update(attachment_obj())
        p['type'] = 'image'
    if maybe(0.2):
        p['providerOptions'] = {'x': 1}
    return cache_control(p)


def audio_part():
    t = pick('input_audio', 'audio')
    fmt = pick('mp3', 'wav', 'MP3', 'flac', 'Ogg', None, 5)
    holder = {'data': b64(b'RIFFxxxx'), 'format': fmt}
    if maybe(0.2):
        holder['media_type'] = pick('audio/x-custom', None)
    k = pick('input_audio', 'audio', 'flat')
    if k == 'flat':
        p = dict(holder)
        p['type'] = t
    else:
        p = {'type': t, k: holder}
    return p


def file_part():
    t = pick('file', 'input_file', 'document')
    k = pick('file_obj', 'source_b64', 'source_text', 'source_content', 'source_url', 'flat', 'content', 'none')
    p = {'type': t}
    if k == 'file_obj':
        f = {}
        if maybe(0.7):
            f[pick('file_data', 'file_id', 'url')] = pick(b64(b'%PDF'), data_url(), 'file-1', 'https://x/y.pdf')
        if maybe(0.5):
            f['filename'] = pick('a.pdf', None)
        p['file'] = f
    elif k == 'source_b64':
        p['source'] = {'type': 'base64', 'media_type': 'application/pdf', 'data': b64(b'%PDF-1.7')}
    elif k == 'source_text':
        p['source'] = {'type': 'text', 'media_type': pick('text/plain', None), 'data': text()}
    elif k == 'source_content':
        p['source'] = {'type': 'content', 'content': pick(text(), [text_part(), image_part()], None)}
    elif k == 'source_url':
        p['source'] = {'type': 'url', 'url': url_or_path()}
    elif k == 'flat':
        p.update(attachment_obj())
        p['type'] = t
    elif k == 'content':
        p['content'] = pick(text(), None, [text_part()])
    if maybe(0.3):
        p['filename'] = pick('doc.pdf', None)
    if maybe(0.2):
        p[pick('title', 'context', 'citations')] = pick('T', None, {'enabled': True})
    return cache_control(p)


def tool_use_part():
    p = {'type': 'tool_use', 'id': R.choice(IDS), 'name': R.choice(NAMES)}
    if maybe(0.9):
        p['input'] = args_any()
    return cache_control(p)


def tool_call_part():
    p = {'type': 'tool_call', 'id': R.choice(IDS)}
    if maybe(0.8):
        p['name'] = R.choice(NAMES)
    k = pick('arguments', 'argumentsText', 'both', 'none', 'input')
    if k in ('arguments', 'both'):
        p['arguments'] = pick({'a': 1}, [], None, 'txt')
    if k in ('argumentsText', 'both'):
        p['argumentsText'] = pick('{bad', None)
    if k == 'input':
        p['input'] = {'x': 1}
    return p


def ai_tool_call_part():
    p = {'type': 'tool-call', 'toolCallId': R.choice(IDS), 'toolName': R.choice(NAMES)}
    k = pick('input', 'args', 'both', 'none')
    if k in ('input', 'both'):
        p['input'] = args_any()
    if k in ('args', 'both'):
        p['args'] = args_any()
    if maybe(0.2):
        p['providerExecuted'] = pick(True, None)
    return p


def tool_result_part(depth=0):
    p = {'type': 'tool_result'}
    k = pick('tool_use_id', 'tool_use_id', 'id', 'both', 'none')
    if k in ('tool_use_id', 'both'):
        p['tool_use_id'] = R.choice(IDS)
    if k in ('id', 'both'):
        p['id'] = R.choice(IDS)
    if maybe(0.85):
        p['content'] = pick(text(), None, '', [text_part()],
                            [text_part(), image_part()] if depth < 1 else [text_part()],
                            [tool_result_part(depth + 1)] if depth < 1 else 'x', 7, {'type': 'text', 'text': 'o'})
    if maybe(0.4):
        p['is_error'] = pick(True, False, 'true', None)
    return cache_control(p)


def ai_tool_result_part():
    p = {'type': 'tool-result', 'toolCallId': R.choice(IDS), 'toolName': R.choice(NAMES)}
    k = pick('output_text', 'output_json', 'output_error', 'output_str', 'result', 'result_str', 'none', 'output_novalue')
    if k == 'output_text':
        p['output'] = {'type': 'text', 'value': text()}
    elif k == 'output_json':
        p['output'] = {'type': 'json', 'value': pick({'t': 21}, [1, 2], None, 3)}
    elif k == 'output_error':
        p['output'] = {'type': pick('error-text', 'error-json'), 'value': pick('boom', {'e': 1})}
    elif k == 'output_str':
        p['output'] = text()
    elif k == 'result':
        p['result'] = pick({'t': 21}, [1], 3, None)
    elif k == 'result_str':
        p['result'] = text()
    elif k == 'output_novalue':
        p['output'] = {'type': 'json'}
    if maybe(0.3):
        p['isError'] = pick(True, False, None)
    return p


def thinking_part():
    p = {'type': 'thinking', 'thinking': pick('Let me think.', None, '', []), 'signature': 'sig' + str(R.randint(0, 9))}
    return p


def other_part():
    t = pick('redacted_thinking', 'server_tool_use', 'web_search_tool_result', 'mcp_tool_use', 'custom_call',
             'reasoning', 'json', 'refusal', None, 5, 'function_call')
    p = {}
    if t is not None or maybe(0.5):
        p['type'] = t
    if t == 'redacted_thinking':
        p['data'] = 'opaque'
    elif t in ('server_tool_use', 'mcp_tool_use', 'custom_call'):
        p['id'] = R.choice(IDS)
        p['name'] = R.choice(NAMES)
        p['input'] = {'q': 'x'}
    elif t == 'web_search_tool_result':
        p['tool_use_id'] = R.choice(IDS)
        p['content'] = [{'type': 'web_search_result', 'url': 'https://x'}]
    elif t == 'function_call':
        p['name'] = pick('f', None, [])
        p['arguments'] = pick('{"a":1}', None, [], {'a': 1})
    else:
        if maybe(0.5):
            p['id'] = R.choice(IDS)
        if maybe(0.3):
            p['call_id'] = R.choice(IDS)
        if maybe(0.3):
            p['tool_call_id'] = R.choice(IDS)
        p['value'] = pick(text(), None, [], {'k': [None]})
    return cache_control(p)


def scalar_part():
    return pick(text(), 5, True, None, [1, 'x'], '')


PARTS_CHAT = [text_part, image_url_part, audio_part, file_part, scalar_part]
PARTS_ANTH = [text_part, image_part, file_part, tool_use_part, tool_result_part, thinking_part, other_part]
PARTS_RESP = [text_part, input_image_part, file_part, audio_part]
PARTS_AI = [text_part, image_part, file_part, ai_tool_call_part, ai_tool_result_part]
PARTS_ALL = PARTS_CHAT + PARTS_ANTH + PARTS_RESP + PARTS_AI + [tool_call_part, other_part]


def content(parts, allow_scalar=True):
    k = R.random()
    if k < 0.35:
        return text()
    if k < 0.42 and allow_scalar:
        return pick(None, '', 5, {'type': 'text', 'text': 'single'})
    return [R.choice(parts)() for _ in range(R.randint(0, 4))]


# ----------------------------------------------------------------- tools

def schema():
    return pick({'type': 'object', 'properties': {'city': {'type': 'string'}, 'timestamp': {'type': 'string'}}},
                {'type': 'object'}, None, {'jsonSchema': {'type': 'object', 'properties': {}}}, {})


def fn_def():
    f = {}
    if maybe(0.9):
        f['name'] = R.choice(NAMES)
    if maybe(0.6):
        f['description'] = pick('Get the weather', None, '', [])
    k = pick('parameters', 'input_schema', 'inputSchema', 'none', 'two')
    if k in ('parameters', 'two'):
        f['parameters'] = schema()
    if k in ('input_schema', 'two'):
        f['input_schema'] = schema()
    if k == 'inputSchema':
        f['inputSchema'] = schema()
    if maybe(0.2):
        f['strict'] = pick(True, None)
    return cache_control(f)


def chat_tool():
    t = {'type': 'function', 'function': fn_def()}
    if maybe(0.1):
        t['extra'] = 1
    return pick(t, t, t, fn_def(), 'oddtool')


def anth_tool():
    f = fn_def()
    if maybe(0.7):
        f['input_schema'] = schema()
    return pick(f, f, f, {'type': pick('bash_20250124', 'web_search_20250305'), 'name': pick('bash', 'web_search'),
                             'max_uses': pick(3, None)}, dict(f, type='custom'))


def resp_tool():
    f = fn_def()
    f['type'] = 'function'
    return pick(f, f, {'type': 'web_search'}, {'type': 'file_search', 'vector_store_ids': ['vs1']},
                {'type': pick(None, 'function'), 'name': 'g'})


def tools_list(gen, n=None):
    return [gen() for _ in range(R.randint(0, 3) if n is None else n)]


# ----------------------------------------------------------------- options

def add_options(b, kind):
    choices = ['temperature', 'max_tokens', 'top_p', 'stop', 'stream', 'user', 'metadata', 'seed', 'n',
               'logprobs', 'response_format', 'stream_options', 'tool_choice', 'unknown_arg', 'store',
               'service_tier', 'background', 'text', 'top_logprobs', 'include', 'reasoning', 'nullarg',
               'timestamp', 'api_key', 'modalities', 'max_output_tokens', 'stop_sequences', 'top_k',
               'thinking', 'encoding_format', 'dimensions', 'parallel_tool_calls', 'previous_response_id']
    for _ in range(R.randint(0, 4)):
        k = R.choice(choices)
        if k == 'temperature':
            b[k] = pick(0, 0.0, -0.0, 0.7, 1, None, '0', 0.0001)
        elif k == 'stop':
            b[k] = pick('\n', ['a', 'b'], None, [])
        elif k == 'stop_sequences':
            b[k] = pick('END', ['x'])
        elif k in ('stream', 'background', 'logprobs'):
            b[k] = pick(True, False, None, 0)
        elif k == 'n':
            b[k] = pick(1, 1.0, 2, None, '1')
        elif k == 'response_format':
            b[k] = pick({'type': 'text'}, {'type': 'json_object'}, {'type': 'text', 'x': None}, None, 'text')
        elif k == 'stream_options':
            b[k] = pick({'include_usage': False}, {'include_usage': True}, {}, {'include_usage': None, 'x': 1}, None, 5)
        elif k == 'text':
            b[k] = pick({'format': {'type': 'text'}}, {'format': {'type': 'json_object'}}, {'verbosity': 'low', 'format': None},
                        {}, None, {'format': {'type': 'text', 'strict': None}})
        elif k == 'encoding_format':
            b[k] = pick('float', 'base64', None)
        elif k == 'dimensions':
            b[k] = pick(256, None)
        elif k == 'nullarg':
            b['some_null'] = None
        elif k == 'unknown_arg':
            b['x_custom'] = pick(1, {'a': [1, {'b': None}]}, 'v', number(), [number() for _ in range(3)],
                                 {'\U0001F602': 1, '\ufb33': 2, 'a': 3, '\u00e9': 4, 'A': 5, '': 6, '\u0000': 7},
                                 nest(R.randint(500, 512)))
        elif k == 'metadata':
            b[k] = {'trace': 'x'}
        elif k == 'thinking':
            b[k] = {'type': 'enabled', 'budget_tokens': 1024}
        elif k == 'include':
            b[k] = ['reasoning.encrypted_content']
        elif k == 'reasoning':
            b[k] = {'effort': 'low'}
        elif k == 'modalities':
            b[k] = ['text', 'audio']
        else:
            b[k] = pick(10, 'x', 1.5, None, [], 1e21, 1e-7)
    return b


def call_options():
    o = {}
    if maybe(0.02):
        # bad options: E_ARG before anything else
        k = pick('provider', 'ignoreArgs', 'volatileKeys')
        o[k] = pick('openai', None, 5, '', 'x', [1], {}) if k == 'provider' else pick('x', [1], None, {}, ['a', None])
        return o
    if maybe(0.15):
        o['ignoreArgs'] = R.sample(['temperature', 'tools', 'system', 'context', 'model', 'messages', 'stop',
                                    'instructions', 'input', 'prompt', 'options', 'x_custom', 'functions', 'n',
                                    'stream', 'user', 'previous_response_id', 'role', 'max_tokens'],
                                   R.randint(1, 3))
    if maybe(0.15):
        o['volatileKeys'] = R.sample(['timestamp', 'nonce', 'id', 'name', 'text', 'city', 'detail', 'content',
                                      'type', 'arguments', 'role', 'legacy', 'mediaType', 'sha256', 'filename',
                                      'argumentsText', 'parameters', 'tool_use_id'], R.randint(1, 2))
    if maybe(0.06):
        o['provider'] = pick('openai-chat', 'anthropic', 'openai-responses', 'generic', 'openai-embeddings')
    return o


# ----------------------------------------------------------------- shapes

def model():
    return pick('gpt-4o', 'claude-sonnet-4', 'm', None, {'modelId': 'gpt-4o', 'provider': 'openai'}, {'id': 'x'}, 5)


def chat_body():
    msgs = []
    if maybe(0.5):
        msgs.append(noise({'role': pick('system', 'developer'), 'content': content(PARTS_CHAT)}))
    for _ in range(R.randint(0, 5)):
        r = pick('user', 'user', 'assistant', 'tool', 'function')
        m = {'role': r}
        if r == 'assistant':
            m['content'] = pick(None, text(), content(PARTS_CHAT))
            if maybe(0.6):
                m['tool_calls'] = [pick(
                    {'id': R.choice(IDS), 'type': 'function', 'function': {'name': R.choice(NAMES), 'arguments': args_text()}},
                    {'id': R.choice(IDS), 'type': 'function', 'function': {'name': R.choice(NAMES), 'arguments': args_any()}, 'index': 0},
                    {'id': R.choice(IDS), 'function': {'name': 'f', 'arguments': '{}'}},
                    {'id': R.choice(IDS), 'type': 'custom', 'custom': {'name': 'c', 'input': 'x'}, 'index': 1},
                    {'id': R.choice(IDS), 'type': None, 'function': None}, 'odd')
                    for _ in range(R.randint(0, 3))]
            if maybe(0.1):
                m['function_call'] = pick({'name': 'f', 'arguments': args_text()}, None, 'x', {'name': None})
            if maybe(0.2):
                m['refusal'] = None
        elif r == 'tool':
            if maybe(0.9):
                m['tool_call_id'] = R.choice(IDS)
            m['content'] = content(PARTS_CHAT)
        elif r == 'function':
            m['name'] = pick('f', None)
            m['content'] = text()
        else:
            m['content'] = content(PARTS_CHAT)
            if maybe(0.1):
                m['name'] = pick('alice', None, [])
        msgs.append(noise(m))
    b = {'model': model(), 'messages': msgs}
    if maybe(0.4):
        b['tools'] = tools_list(chat_tool)
    if maybe(0.05):
        b['functions'] = tools_list(fn_def)
    return add_options(b, 'chat')


def anth_body():
    b = {'model': model()}
    if maybe(0.6):
        b['system'] = pick(text(), [cache_control({'type': 'text', 'text': text()}) for _ in range(R.randint(0, 2))], None, '')
    msgs = []
    for i in range(R.randint(0, 5)):
        r = pick('user', 'assistant')
        m = {'role': r, 'content': content(PARTS_ANTH)}
        msgs.append(noise(m))
    b['messages'] = msgs
    if maybe(0.5):
        b['tools'] = tools_list(anth_tool)
    b['max_tokens'] = pick(1024, None)
    return add_options(b, 'anthropic')


def resp_item():
    k = pick('msg', 'msg', 'fc', 'fc', 'fco', 'reasoning', 'item_reference', 'web_search_call', 'msg_typed', 'bad')
    if k in ('msg', 'msg_typed'):
        m = {'role': pick('user', 'assistant', 'system', 'developer'), 'content': content(PARTS_RESP)}
        if k == 'msg_typed':
            m['type'] = 'message'
            m['id'] = 'msg_1'
            m['status'] = 'completed'
        return m
    if k == 'fc':
        m = {'type': 'function_call', 'call_id': R.choice(IDS), 'name': R.choice(NAMES), 'arguments': args_any()}
        if maybe(0.5):
            m['id'] = 'fc_x'
            m['status'] = 'completed'
        return m
    if k == 'fco':
        return {'type': 'function_call_output', 'call_id': R.choice(IDS), 'output': pick(text(), None, [{'type': 'input_text', 'text': 'o'}], 5)}
    if k == 'reasoning':
        return {'type': 'reasoning', 'id': 'rs_1', 'summary': pick([], [{'type': 'summary_text', 'text': 's'}]),
                'encrypted_content': pick(None, 'enc')}
    if k == 'item_reference':
        return {'type': 'item_reference', 'id': 'msg_9', 'x': None}
    if k == 'web_search_call':
        return {'type': 'web_search_call', 'id': 'ws_1', 'status': 'completed', 'call_id': R.choice(IDS), 'action': {'q': 'x'}}
    return pick({'role': None, 'type': 'function_call', 'call_id': 'c'}, {'type': 5}, {'content': 'no role'})


def resp_body():
    b = {'model': model()}
    k = R.random()
    if k < 0.3:
        b['input'] = text()
    elif k < 0.95:
        b['input'] = [resp_item() for _ in range(R.randint(0, 6))]
    else:
        b['input'] = pick(None, 5)
    if maybe(0.5):
        b['instructions'] = pick(text(), None, [{'type': 'input_text', 'text': 'sys'}])
    if maybe(0.4):
        b['tools'] = tools_list(resp_tool)
    if maybe(0.15):
        b['previous_response_id'] = pick('resp_1', None)
    return add_options(b, 'responses')


def emb_body():
    b = {'model': pick('text-embedding-3-small', 'm', 'EMBED-x', None)}
    if maybe(0.95):
        b['input'] = pick('hello', ['a', 'b'], [1, 2, 3], [[1, 2], [3]], [], None, ['a', 1], [[]], ['x', [1]], [{'a': 1}], 5)
    if maybe(0.5):
        b['encoding_format'] = pick('float', 'base64', None)
    if maybe(0.3):
        b['dimensions'] = pick(256, None)
    if maybe(0.2):
        b['options'] = pick({}, {'dimensions': 3, 'user': 'u'}, {'encoding_format': 'float'}, {'encoding_format': None},
                            {'model': 'x', 'input': 'y'})
    if maybe(0.3):
        b['user'] = 'u1'
    if maybe(0.1):
        b['x_custom'] = 1
    return b


def ai_message():
    r = pick('user', 'assistant', 'tool', 'system')
    if r == 'system':
        return {'role': 'system', 'content': text()}
    if r == 'tool':
        return {'role': 'tool', 'content': [ai_tool_result_part() for _ in range(R.randint(1, 2))]}
    return {'role': r, 'content': content(PARTS_AI)}


def lc_message():
    kind = pick('HumanMessage', 'AIMessage', 'AIMessageChunk', 'SystemMessage', 'ToolMessage', 'ChatMessage',
                'FunctionMessage', 'DeveloperMessage', 'Weird', 'HumanMessageChunk', 'FooChunk', 5)
    kw = {'content': content(PARTS_CHAT), 'additional_kwargs': {}, 'response_metadata': {'x': 1}, 'id': 'run-1'}
    if str(kind).startswith('AI') and maybe(0.6):
        kw['tool_calls'] = [{'id': R.choice(IDS), 'name': R.choice(NAMES), 'args': pick({'a': 1}, {}, None), 'type': 'tool_call'}]
    if kind == 'ToolMessage':
        kw['tool_call_id'] = R.choice(IDS)
    if kind == 'ChatMessage':
        kw['role'] = pick('narrator', 'user', None)
    if maybe(0.3):
        kw['name'] = pick('bob', 5, None)
    return {'lc': 1, 'type': 'constructor', 'id': ['langchain_core', 'messages', kind], 'kwargs': kw}


def lc_instance():
    # a LangChain message instance as JSON carries it (no class: its kind is `object`)
    m = {'lc_namespace': ['langchain_core', 'messages'], 'content': content(PARTS_CHAT), 'lc_serializable': True,
         'additional_kwargs': {}, 'id': 'run-2'}
    if maybe(0.6):
        m['role'] = pick('user', 'assistant', 'narrator', None, 5)
    if maybe(0.3):
        m['type'] = pick('human', 'ai')
    if maybe(0.3):
        m['tool_calls'] = [{'id': R.choice(IDS), 'name': 'f', 'args': {'a': 1}}]
    if maybe(0.2):
        m['tool_call_id'] = R.choice(IDS)
    return m


def generic_body():
    b = {}
    if maybe(0.8):
        b['model'] = model()
    k = pick('messages', 'prompt_str', 'prompt_list', 'both', 'lc')
    if k in ('messages', 'both'):
        b['messages'] = [noise({'role': pick('user', 'assistant', 'narrator', None, 'tool'), 'content': content(PARTS_ALL)})
                         for _ in range(R.randint(0, 4))]
    if k == 'lc':
        b['messages'] = [pick(lc_message(), lc_message(), lc_instance(), {'role': 'user', 'content': 'x'})
                         for _ in range(R.randint(1, 4))]
    if k == 'prompt_str':
        b['prompt'] = pick(text(), None)
    if k in ('prompt_list', 'both'):
        b['prompt'] = [ai_message() for _ in range(R.randint(0, 4))]
    if maybe(0.4):
        b['system'] = pick(text(), None, [{'type': 'text', 'text': 's'}])
    if maybe(0.4):
        b['context'] = pick({'doc': 'x', 'b': 1, 'a': None}, {}, [1])
    if maybe(0.4):
        b['options'] = pick({'temperature': 0, 'max_tokens': 5}, {'temperature': 0.5}, {}, {'stream': False},
                            {'user': 'u', 'seed': 1})
    if maybe(0.4):
        tk = pick('list', 'map')
        if tk == 'list':
            b['tools'] = tools_list(lambda: pick(chat_tool(), anth_tool(), fn_def()))
        else:
            b['tools'] = {R.choice(['weather', 'search', 'b']): pick(
                {'description': 'W', 'inputSchema': schema()},
                {'description': 'W', 'parameters': {'jsonSchema': {'type': 'object'}}},
                {'type': 'function', 'inputSchema': {'type': 'object'}}, {}) for _ in range(R.randint(0, 3))}
    return add_options(b, 'generic')


def mutate(b):
    """Cross-shape members and structural oddities, to exercise detection and layouts."""
    for _ in range(R.randint(1, 2)):
        k = pick('system', 'top_k', 'context', 'options', 'instructions', 'input', 'prompt', 'messages_bad',
                 'tools_bad', 'functions_bad', 'msg_bad', 'tools_obj', 'thinking', 'n', 'role_odd', 'drop_messages',
                 'tool_call_id_null')
        if k == 'system':
            b['system'] = pick('S', None)
        elif k == 'top_k':
            b['top_k'] = 5
        elif k == 'context':
            b['context'] = pick({'k': 1}, [1], None)
        elif k == 'options':
            b['options'] = pick({'temperature': 0}, 'x', None)
        elif k == 'instructions':
            b['instructions'] = 'I'
        elif k == 'input':
            b['input'] = pick('x', ['a'], None)
        elif k == 'prompt':
            b['prompt'] = pick('p', 5, [{'role': 'user', 'content': 'q'}], [5])
        elif k == 'messages_bad':
            b['messages'] = pick(None, 'x', {'a': 1})
        elif k == 'tools_bad':
            b['tools'] = pick('x', 5, None, {'t': 'odd'})
        elif k == 'functions_bad':
            b['functions'] = pick('x', {'a': 1}, None)
        elif k == 'msg_bad' and isinstance(b.get('messages'), list):
            b['messages'].insert(R.randint(0, len(b['messages'])), pick(5, 'x', None, []))
        elif k == 'tools_obj':
            b['tools'] = [{'name': 't', 'input_schema': {}}]
        elif k == 'thinking':
            b['thinking'] = None
        elif k == 'n':
            b['n'] = 1
        elif k == 'role_odd' and isinstance(b.get('messages'), list) and b['messages']:
            m = b['messages'][0]
            if isinstance(m, dict):
                m['role'] = pick(None, 5, [], 'narrator')
        elif k == 'drop_messages':
            b.pop('messages', None)
        elif k == 'tool_call_id_null' and isinstance(b.get('messages'), list):
            b['messages'].append({'role': pick('user', 'tool'), 'content': 'r', 'tool_call_id': pick(None, [], 'x')})
    return b


SPECIAL_KEYS = ['type', 'id', 'call_id', 'tool_use_id', 'tool_call_id', 'source', 'file', 'image_url', 'content',
                'role', 'format', 'filename', 'jsonSchema', 'modelId', 'lc_namespace', 'cache_control', 'name',
                'arguments', 'input', 'output', 'value', 'text', 'media_type', 'mediaType', 'mime_type', 'is_error',
                'isError', 'toolCallId', 'toolName', 'index', 'signature', 'status', 'url', 'data', 'file_data',
                'path', 'file_id', 'fileId', 'detail', 'kwargs', 'lc', 'tool_calls', 'function', 'function_call',
                'parameters', 'input_schema', 'inputSchema', 'description', 'legacy', 'strict', 'thinking', 'result',
                'args', 'sha256', 'textSha256', 'image', 'audio', 'input_audio', 'title', 'timestamp', 'createdAt']
TYPES = ['text', 'input_text', 'output_text', 'image_url', 'input_image', 'image', 'input_audio', 'audio', 'file',
         'input_file', 'document', 'tool_use', 'tool_call', 'tool-call', 'tool_result', 'tool-result', 'thinking',
         'function_call', 'function_call_output', 'item_reference', 'message', 'reasoning', 'server_tool_use',
         'x_call', 'json', 'content', 'base64', 'url', 'function', 'custom', 'constructor', 'error-json', 'Text']


def random_value():
    k = R.random()
    if k < 0.25:
        return pick(None, [], '', 0, 1, True, False, {}, 'x', [None], -0.0, 2.5)
    if k < 0.45:
        return R.choice(TYPES)
    if k < 0.6:
        return pick(R.choice(IDS), args_text(), data_url(), url_or_path(), b64(PNG))
    if k < 0.8:
        return R.choice(PARTS_ALL)()
    return {R.choice(SPECIAL_KEYS): random_value() if maybe(0.3) else pick(None, 'v', R.choice(TYPES), 1)
            for _ in range(R.randint(1, 3))}


def deep_mutate(v, p):
    """Replaces values and adds members that name rules (type, ids, holders), anywhere."""
    if isinstance(v, dict):
        out = {}
        for k, e in v.items():
            if maybe(p * 0.3):
                continue
            out[k] = random_value() if maybe(p) else deep_mutate(e, p)
        if maybe(p):
            out[R.choice(SPECIAL_KEYS)] = random_value()
        return out
    if isinstance(v, list):
        out = [random_value() if maybe(p) else deep_mutate(e, p) for e in v]
        if maybe(p * 0.5):
            out.insert(R.randint(0, len(out)), random_value())
        return out
    return v


def error_text():
    """Bodies given as JSON text that is not I-JSON (one fault each)."""
    return pick('{"model":"m","messages":[{"role":"user","content":"a"}],"model":"n"}',
                '{"model":"m","messages":[{"role":"user","content":"\\ud800"}]}',
                '{"model":"m","messages":[],"temperature":1e400}',
                '{"model":"m","messages":[]',
                '\ufeff{"messages":[]}',
                '{"messages":[{"role":"user","content":"x"}],"n":NaN}',
                '[1,2]', '"str"', '5', 'null',
                '{"messages":' + '[' * 600 + ']' * 600 + '}',
                '{"mod\\u0065l":"m","model":"n","messages":[]}',
                '{"model":"m","messages":[{"role":"user","content":"\\udc00x"}]}',
                # two faults: the first in text order wins
                '{"model":"m","messages":[],"a":1,"a":1e400}',
                '{"model":"m","messages":[],"a":1e400,"a":1}',
                '{"model":"m","messages":[],"a":"\\ud800","a":1}',
                '{"model":"m","messages":[],"a":1,"a":"\\ud800"}',
                '{"model":"m","messages":[],"a":1,"a":2,' + '[' * 600,
                '{"model":"m","messages":[' + '[' * 520 + '"\\ud800"' + ']' * 520 + ']}',
                '{"model":"m","messages":[],"a":1e400,' + '[' * 600,
                '{"model":"m","messages":[],"t":"\x01"}',
                '{"model":"m","messages":[],"a":01}',
                '{"model":"m","messages":[],"a":1.}',
                '{"model":"m","messages":[],"a":"\\x"}',
                '{"model":"m","messages":[],}',
                '{"model":"m","messages":[] } x')


def spell_number(x):
    """One of the JSON spellings of the same double."""
    if isinstance(x, bool):
        return 'true' if x else 'false'
    f = float(x)
    if isinstance(x, int) and abs(x) > 2 ** 53:
        return str(x)
    if f == int(f) and abs(f) < 1e15:
        i = int(f)
        neg = '-' if (f < 0 or (f == 0 and str(f).startswith('-'))) else ''
        a = abs(i)
        return neg + pick(str(a), str(a) + '.0', str(a) + 'E0', str(a) + '.000e+0', str(a * 10) + 'e-1' if a else '0e5')
    r = repr(f)
    if 'e' in r:
        m, e = r.split('e')
        if '.' not in m:
            m += '.0'
        return pick(r, m + 'E' + e, m + '0e' + e)
    return pick(r, r + '0', r + 'e0', r + 'E-0')


def spell_string(s):
    out = ['"']
    for ch in s:
        o = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == '\\':
            out.append('\\\\')
        elif o < 0x20 or (maybe(0.05) and o != 0x2f):
            if o > 0xFFFF:
                hi, lo = 0xD800 + ((o - 0x10000) >> 10), 0xDC00 + ((o - 0x10000) & 0x3FF)
                out.append('\\u%04x\\u%04X' % (hi, lo))
            else:
                out.append(pick('\\u%04x', '\\u%04X') % o)
        elif ch == '/' and maybe(0.5):
            out.append('\\/')
        else:
            out.append(ch)
    out.append('"')
    return ''.join(out)


def spell(v):
    """JSON text with random whitespace, number spelling and string escapes (same value)."""
    ws = lambda: pick('', '', ' ', '\n  ', '\t', '\r\n')
    if v is None:
        return 'null'
    if isinstance(v, bool) or isinstance(v, (int, float)):
        return spell_number(v)
    if isinstance(v, str):
        return spell_string(v)
    if isinstance(v, list):
        return '[' + ws() + (',' + ws()).join(spell(e) for e in v) + ws() + ']'
    return '{' + ws() + (',' + ws()).join(spell_string(k) + ws() + ':' + ws() + spell(e) for k, e in v.items()) + ws() + '}'


def respell(text):
    """Whitespace and number respelling that must not change the key."""
    if maybe(0.3):
        text = text.replace(',', ' ,\n ').replace(':', ' : ')
    return text


def main():
    gens = [('openai-chat', chat_body, 24), ('anthropic', anth_body, 20), ('openai-responses', resp_body, 20),
            ('openai-embeddings', emb_body, 10), ('generic', generic_body, 20)]
    weights = [g[2] for g in gens]
    cases = []
    for i in range(COUNT):
        if R.random() < 0.03:
            cases.append({'shape': 'error-text', 'body': error_text(), 'options': call_options()})
            continue
        label, gen, _ = R.choices(gens, weights)[0]
        b = gen()
        if R.random() < 0.2:
            b = mutate(b)
            label += '+mutated'
        if R.random() < 0.25:
            b = deep_mutate(b, R.choice([0.03, 0.08, 0.15]))
            label += '+deep'
        text = spell(b) if maybe(0.3) else respell(json.dumps(b, ensure_ascii=maybe(0.3)))
        cases.append({'shape': label, 'body': text, 'options': call_options()})
    json.dump(cases, sys.stdout)


main()
