"""The request bodies of test/vectors/request-keys.json: every rule of docs/hash-spec.md
("Request key and signature") at least once. Each case names the rules it covers."""
import base64
import copy

PNG = base64.b64encode(bytes(range(0, 48))).decode('ascii')  # 48 bytes: 64 chars, no padding
HELLO = base64.b64encode(b'hello').decode('ascii')  # aGVsbG8=

CHAT = {'model': 'gpt-4o', 'messages': [{'role': 'system', 'content': 'Be brief.'}, {'role': 'user', 'content': 'Weather in Paris?'}]}
CHAT_TOOLS = {
    'model': 'gpt-4o',
    'messages': [
        {'role': 'user', 'content': 'Weather in Paris?'},
        {'role': 'assistant', 'content': None, 'tool_calls': [{'id': 'call_Ab', 'type': 'function', 'function': {'name': 'weather', 'arguments': '{"city": "Paris"}'}}]},
        {'role': 'tool', 'tool_call_id': 'call_Ab', 'content': '21C'},
    ],
    'tools': [{'type': 'function', 'function': {'name': 'weather', 'description': 'Weather', 'parameters': {'type': 'object'}}}],
}
ANTHROPIC = {
    'model': 'claude-sonnet-4-5', 'max_tokens': 256, 'system': 'Be brief.',
    'messages': [
        {'role': 'user', 'content': 'Weather in Paris?'},
        {'role': 'assistant', 'content': [{'type': 'tool_use', 'id': 'toolu_1', 'name': 'weather', 'input': {'city': 'Paris'}}]},
        {'role': 'user', 'content': [{'type': 'tool_result', 'tool_use_id': 'toolu_1', 'content': '21C'}]},
    ],
    'tools': [{'name': 'weather', 'description': 'Weather', 'input_schema': {'type': 'object'}}],
}
RESPONSES = {
    'model': 'gpt-4o', 'instructions': 'Be brief.',
    'input': [
        {'role': 'user', 'content': 'Weather in Paris?'},
        {'type': 'function_call', 'id': 'fc_1', 'call_id': 'call_x', 'name': 'weather', 'arguments': '{"city":"Paris"}'},
        {'type': 'function_call_output', 'call_id': 'call_x', 'output': '21C'},
    ],
}
GENERIC = {'messages': [{'role': 'narrator', 'content': 'Once.', 'timestamp': 5}], 'tools': [{'name': 'go'}], 'context': {'node': 'start', 'user': 'u'}}
EMBED = {'model': 'text-embedding-3-small', 'input': ['hello', 'world']}
VERCEL = {'model': 'gpt-4o', 'system': 'Be brief.', 'prompt': 'Weather in Paris?'}

BASES = {'chat': CHAT, 'chat-tools': CHAT_TOOLS, 'anthropic': ANTHROPIC, 'responses': RESPONSES, 'generic': GENERIC, 'embeddings': EMBED, 'vercel': VERCEL}

DROPPED = [
    'user', 'metadata', 'store', 'service_tier', 'prompt_cache_key', 'prompt_cache_retention', 'safety_identifier',
    'api_key', 'apiKey', 'api_base', 'base_url', 'organization', 'timeout', 'request_timeout', 'request_id',
    'requestId', 'idempotency_key', 'timestamp', 'created', 'created_at', 'createdAt', 'headers', 'extra_headers',
    'extra_query', 'num_retries', 'max_retries', 'maxRetries', 'abortSignal',
]


def user(content, **extra):
    return {'model': 'm', 'messages': [{'role': 'user', 'content': content, **extra}]}


def gen(messages, **extra):
    return {'messages': messages, 'context': {}, **extra}


def cases():
    out = []

    def add(name, rules, body=None, options=None, text=None):
        c = {'name': name, 'rules': rules}
        if text is not None:
            c['bodyText'] = text
        else:
            c['body'] = copy.deepcopy(body)
        if options:
            c['options'] = options
        out.append(c)

    # Bases as they are.
    for n, b in BASES.items():
        add(f'{n}: base', ['layout', 'detection'], b)

    # Never-list arguments, on every shape.
    for n, b in BASES.items():
        for k in DROPPED:
            add(f'{n}: {k} is never in the key', ['options.dropped'], {**b, k: 'x-1'})

    # Shape-deciding arguments: default equals absent, other values are kept.
    deciding = [
        ('stream', True, False), ('background', True, False), ('n', 3, 1), ('logprobs', True, False),
        ('response_format', {'type': 'json_object'}, {'type': 'text'}),
        ('top_logprobs', 5, None), ('include', ['reasoning.encrypted_content'], None), ('modalities', ['text', 'audio'], None),
        ('audio', {'voice': 'alloy', 'format': 'mp3'}, None), ('output_format', {'type': 'json_schema'}, None),
    ]
    for n in ('chat', 'anthropic', 'responses', 'generic', 'vercel'):
        for k, other, default in deciding:
            add(f'{n}: {k} non-default', ['options.shape'], {**BASES[n], k: other})
            if default is not None:
                add(f'{n}: {k} default equals absent', ['options.shape.default'], {**BASES[n], k: default})
    for so in [{'include_usage': True}, {'include_usage': False}, {'include_usage': False, 'include_obfuscation': False}, {}, {'include_usage': None}]:
        add(f'chat: stream_options {so}', ['options.stream_options'], {**CHAT, 'stream': True, 'stream_options': so})
    for tx in [{'format': {'type': 'text'}}, {'format': {'type': 'text'}, 'verbosity': 'low'}, {'format': {'type': 'json_object'}}, {'verbosity': None}]:
        add(f'responses: text {tx}', ['options.text'], {**RESPONSES, 'text': tx})
    for ef in ['float', 'base64']:
        add(f'embeddings: encoding_format {ef}', ['embeddings', 'options.shape.default'], {**EMBED, 'encoding_format': ef})
    add('embeddings: dimensions', ['embeddings', 'options.shape'], {**EMBED, 'dimensions': 256})
    add('response_format json_schema', ['options.shape'], {**CHAT, 'response_format': {'type': 'json_schema', 'json_schema': {'name': 'x', 'schema': {}}}})
    add('response_format text with extra member is kept', ['options.shape.default'], {**CHAT, 'response_format': {'type': 'text', 'x': 1}})

    # Temperature, stop, null options, unknown options.
    for t in [0, 0.0, 0.7, 1, 2, None, '0']:
        add(f'chat: temperature {t!r}', ['options.temperature'], {**CHAT, 'temperature': t})
    for k in ['stop', 'stop_sequences']:
        add(f'{k} string is a list', ['options.stop'], {**CHAT, k: 'END'})
        add(f'{k} list', ['options.stop'], {**CHAT, k: ['END']})
    add('null option is absent', ['options.null'], {**CHAT, 'max_tokens': None})
    add('unknown option kept', ['options.unknown'], {**CHAT, 'x_custom': {'b': 1, 'a': [1.5, 'z']}})
    add('number spelling in options', ['canonical'], {**CHAT, 'max_tokens': 100.0, 'top_p': 0.5})
    add('seed', ['options'], {**CHAT, 'seed': 42})

    # Generic nested options.
    add('generic: options merge', ['options.generic'], {**GENERIC, 'max_tokens': 5, 'options': {'max_tokens': 9, 'top_p': 1}})
    add('generic: nested null removes top-level', ['options.generic'], {**GENERIC, 'max_tokens': 5, 'options': {'max_tokens': None}})
    add('generic: nested dropped arg', ['options.generic'], {**GENERIC, 'options': {'user': 'u', 'stream': True}})
    add('generic: nested ignored', ['ignoreArgs'], {**GENERIC, 'options': {'seed': 1}}, {'ignoreArgs': ['seed']})

    # Detection.
    add('detect: no messages, input string -> responses', ['detection'], {'model': 'gpt-4o', 'input': 'hi'})
    add('detect: instructions only', ['detection'], {'model': 'gpt-4o', 'instructions': 'x'})
    add('detect: previous_response_id', ['detection'], {'model': 'gpt-4o', 'previous_response_id': 'resp_1', 'input': 'more'})
    add('detect: embeddings by model name', ['detection.embeddings'], {'model': 'nomic-Embed-text', 'input': 'hi'})
    add('detect: embeddings by token lists', ['detection.embeddings'], {'model': 'm', 'input': [[1, 2], [3]]})
    add('detect: embeddings by tokens', ['detection.embeddings', 'embeddings'], {'model': 'm', 'input': [1, 2, 3]})
    add('detect: embeddings by dimensions', ['detection.embeddings'], {'model': 'm', 'input': 'hi', 'dimensions': 8})
    add('detect: embeddings view (options object)', ['detection.embeddings'], {'model': 'm', 'input': [], 'options': {}})
    add('detect: empty input list is responses', ['detection'], {'model': 'm', 'input': []})
    add('detect: prompt -> generic', ['detection', 'prompt'], {'model': 'm', 'prompt': 'hi'})
    add('detect: context -> generic', ['detection'], {'messages': [{'role': 'user', 'content': 'x'}], 'context': {'a': 1}})
    add('detect: options object -> generic', ['detection'], {'messages': [{'role': 'user', 'content': 'x'}], 'options': {'seed': 1}})
    for k in ['system', 'stop_sequences', 'top_k', 'thinking']:
        add(f'detect: anthropic by {k}', ['detection.anthropic'], {'model': 'm', k: None, 'messages': [{'role': 'user', 'content': 'x'}]})
    add('detect: anthropic by input_schema', ['detection.anthropic'], {'model': 'm', 'messages': [], 'tools': [{'name': 'f', 'input_schema': None}]})
    for b in [{'type': 'thinking', 'thinking': 'hm', 'signature': 'sig'}, {'type': 'redacted_thinking', 'data': 'xx'}, {'type': 'image', 'source': {'type': 'url', 'url': 'https://e.x/a.png'}}, {'type': 'document', 'source': {'type': 'text', 'media_type': 'text/plain', 'data': 'doc'}}]:
        add(f'detect: anthropic by block {b["type"]}', ['detection.anthropic'], {'model': 'm', 'messages': [{'role': 'assistant', 'content': [b]}]})
    for k in ['functions', 'max_completion_tokens', 'logit_bias', 'frequency_penalty', 'presence_penalty', 'reasoning_effort', 'prediction', 'parallel_tool_calls', 'web_search_options']:
        add(f'detect: openai by {k}', ['detection.openai'], {'model': 'm', k: None, 'messages': [{'role': 'narrator', 'content': 'x'}]})
    add('detect: openai by tool_call_id', ['detection.openai'], {'model': 'm', 'messages': [{'role': 'narrator', 'content': 'x', 'tool_call_id': None}]})
    add('detect: openai by image_url part', ['detection.openai'], {'model': 'm', 'messages': [{'role': 'narrator', 'content': [{'type': 'image_url', 'image_url': 'https://e.x/i.png'}]}]})
    add('detect: generic by unknown role', ['detection'], {'model': 'm', 'messages': [{'role': 'narrator', 'content': 'x'}]})
    add('detect: empty messages -> openai', ['detection'], {'model': 'm', 'messages': []})
    add('forced provider', ['options.provider'], {'model': 'm', 'messages': [{'role': 'user', 'content': 'x'}], 'instructions': 'be brief'}, {'provider': 'openai-responses'})
    add('forced provider generic on anthropic body', ['options.provider'], ANTHROPIC, {'provider': 'generic'})

    # Errors.
    add('error: string body (JSON text of a string)', ['errors'], text='"x"')
    for name, body, in [('error: array body', [1]), ('error: no shape', {'model': 'm'}),
                        ('error: messages not array', {'messages': 'hi'}), ('error: message not object', {'messages': [{'role': 'user', 'content': 'a'}, 'b']}),
                        ('error: responses input object', {'input': {'a': 1}, 'instructions': 'x'}), ('error: prompt number', {'prompt': 7}),
                        ('error: prompt item not object', {'prompt': ['x']}), ('error: tools string', {'messages': [], 'tools': 'x'}),
                        ('error: functions object', {'messages': [], 'functions': {'a': {}}}), ('error: messages null', {'messages': None})]:
        add(name, ['errors'], body)
    add('error: bad provider option', ['errors'], CHAT, {'provider': 'no-such-shape'})
    add('error: ignoreArgs not list', ['errors'], CHAT, {'ignoreArgs': 'seed'})
    for name, text in [('text: duplicate names', '{"model":"a","model":"b","messages":[]}'),
                       ('text: lone surrogate escape in content', '{"model":"a","messages":[{"role":"user","content":"\\ud800"}]}'),
                       ('text: 1e400', '{"model":"a","messages":[],"max_tokens":1e400}'),
                       ('text: invalid JSON', '{"model": "a", "messages": [}'),
                       ('text: valid, respelled', '{ "messages" : [ { "content" : "h\\u0069", "role":"user" } ], "max_tokens": 1.0E2, "model":"m" }'),
                       ('text: escaped pair is one code point', '{"model":"m","messages":[{"role":"user","content":"\\ud83d\\ude00"}]}')]:
        add(name, ['errors' if 'valid,' not in name and 'pair' not in name else 'canonical'], text=text)

    # Content.
    add('content: string', ['content'], user('hi'))
    add('content: empty string', ['content.empty'], user(''))
    add('content: null', ['content.empty'], user(None))
    add('content: absent', ['content.empty'], {'model': 'm', 'messages': [{'role': 'user'}]})
    add('content: empty text part dropped', ['content.empty'], user([{'type': 'text', 'text': ''}, {'type': 'text', 'text': 'a'}]))
    add('content: null text part dropped', ['content.null'], user([{'type': 'text', 'text': None}]))
    add('content: text part without text dropped', ['content.null'], user([{'type': 'text'}]))
    add('content: number content', ['content.other'], user(42))
    add('content: object content is one part', ['content.other'], user({'type': 'text', 'text': 'a'}))
    add('content: non-object parts kept', ['content.other'], user([1, True, None, [1, 2], 'x']))
    add('content: input_text / output_text', ['content.text'], user([{'type': 'input_text', 'text': 'a'}, {'type': 'output_text', 'text': 'b', 'annotations': []}]))
    add('content: text part extra members', ['content.text', 'rest'], user([{'type': 'text', 'text': 'a', 'cache_control': {'type': 'ephemeral'}, 'citations': None, 'x': 0}]))
    add('content: whitespace kept', ['content.text'], user('  a\n'))
    add('content: unicode kept as is', ['canonical'], user('A\u030a é 日本 😂 \u2028 \x7f \x01'))
    add('message: role null dropped', ['null'], gen([{'role': None, 'content': 'x'}]))
    add('message: name kept, noise dropped', ['message.noise'], user('x', name='bob', id='m1', status='done', timestamp=1, created=1, created_at=1, createdAt=1, updated_at=1, updatedAt=1, request_id='r', requestId='r', refusal=None, annotations=[]))
    add('message: unknown member kept', ['rest'], user('x', weight=0.5))
    # Names JavaScript objects inherit (Object.prototype's) are members like any other: rest()
    # skips only the members its output has.
    proto = {'constructor': 'enterprise', 'toString': 'a', 'valueOf': 1, 'hasOwnProperty': True, '__proto__': {'plan': 'free'}, 'isPrototypeOf': [1]}
    add('message: members named like Object.prototype properties kept', ['rest'], user('x', **proto))
    add('content: parts with members named like Object.prototype properties', ['rest', 'content.text', 'content.other', 'tool_result'], {
        'model': 'claude-sonnet-4-5', 'max_tokens': 9, 'messages': [
            {'role': 'assistant', 'content': [{'type': 'tool_use', 'id': 't1', 'name': 'f', 'input': {}, 'valueOf': 2}]},
            {'role': 'user', 'content': [{'type': 'tool_result', 'tool_use_id': 't1', 'content': 'ok', 'constructor': 'x'},
                                         {'type': 'text', 'text': 'hi', '__proto__': {'a': 1}}, {'type': 'custom', 'data': 1, 'toString': 2}]}]})
    add('content: image_url object with a member named constructor', ['rest', 'attachments.url'], user([{'type': 'image_url', 'image_url': {'url': 'https://x.test/a.png', 'constructor': 'c'}}]))
    add('content: audio format named like an Object.prototype property', ['attachments.audio'], user([{'type': 'input_audio', 'input_audio': {'data': HELLO, 'format': 'constructor'}}]))
    add('tools: members named like Object.prototype properties kept', ['tools', 'rest'], {'model': 'm', 'messages': [], 'tools': [
        {'type': 'function', 'function': {'name': 'f', 'constructor': 'x'}, 'toString': 1}, {'name': 'g', 'input_schema': {'type': 'object'}, '__proto__': {'b': 2}},
        {'type': 'web_search', 'hasOwnProperty': 'y'}]})
    add('langchain: kinds and members named like Object.prototype properties', ['langchain', 'rest'], {'model': 'm', 'messages': [
        {'lc': 1, 'type': 'constructor', 'id': ['x', 'constructor'], 'kwargs': {'content': 'a', 'role': 'r'}},
        {'lc': 1, 'type': 'constructor', 'id': ['x', '__proto__'], 'kwargs': {'content': 'b'}},
        {'lc_namespace': ['x'], 'content': 'c', 'constructor': {'name': 'HumanMessage'}}]})
    add('message: an escaped member name spelling constructor', ['rest', 'canonical'],
        text='{"model":"m","messages":[{"role":"user","content":"x","\\u0063onstructor":"enterprise"}]}')
    add('message: type message', ['message'], {'model': 'm', 'input': [{'type': 'message', 'role': 'user', 'content': 'x'}], 'instructions': 'i'})
    add('message: type message no role', ['message'], {'model': 'm', 'input': [{'type': 'message', 'content': 'x'}], 'instructions': 'i'})

    # Attachments.
    img = lambda url, **d: user([{'type': 'image_url', 'image_url': {'url': url, **d}}])
    add('image_url: https', ['attachments.url'], img('https://example.com/a.png', detail='high'))
    add('image_url: url kept exactly', ['attachments.url'], img('HTTPS://Example.com/a.png?x=1#f'))
    add('image_url: data url base64', ['attachments.data'], img(f'data:image/png;base64,{PNG}'))
    add('image_url: data url upper-case', ['attachments.data'], img(f'DATA:Image/PNG;BASE64,{PNG}'))
    add('image_url: data url with charset', ['attachments.mediatype'], img(f'data:image/png;charset=x;base64,{PNG}'))
    add('image_url: data url no media type', ['attachments.data'], img(f'data:;base64,{HELLO}'))
    add('image_url: data url not base64', ['attachments.data'], img('data:text/plain,hello%20world%zz'))
    add('image_url: data url percent in base64', ['attachments.data'], img('data:text/plain;base64,aGVs%62G8='))
    add('image_url: data url bad base64', ['attachments.textsha'], img('data:image/png;base64,@@@'))
    add('image_url: data url no comma', ['attachments.textsha'], img('data:image/png;base64'))
    add('image_url: string (old SDKs)', ['attachments.url'], user([{'type': 'image_url', 'image_url': 'https://e.x/i.png'}]))
    add('image_url: relative path', ['attachments.path'], user([{'type': 'image_url', 'image_url': 'pics/a.png'}]))
    add('image_url: object without url', ['attachments.other'], user([{'type': 'image_url', 'image_url': {'detail': 'low'}}]))
    add('input_image url', ['attachments'], {'model': 'm', 'input': [{'role': 'user', 'content': [{'type': 'input_image', 'image_url': 'https://e.x/i.png', 'detail': 'auto'}]}], 'instructions': 'x'})
    add('input_image file_id', ['attachments.fileid'], {'model': 'm', 'input': [{'role': 'user', 'content': [{'type': 'input_image', 'file_id': 'file-1'}]}], 'instructions': 'x'})
    for variant, data in [('plain', PNG), ('line breaks', PNG[:20] + '\r\n' + PNG[20:40] + '\n ' + PNG[40:]), ('url-safe', PNG.replace('+', '-').replace('/', '_')),
                          ('padded hello', HELLO), ('unpadded hello', HELLO.rstrip('=')), ('one = hello', 'aGVsbG8'), ('over-padded', 'aGVsbG8=='),
                          ('trailing bits', 'aGVsbG9='), ('mixed alphabets', 'ab+_'), ('empty', ''), ('len%4==1', 'abcde'), ('bad char', 'ab*d'), ('= inside', 'ab=d')]:
        add(f'anthropic image base64 {variant}', ['attachments.base64'], {'model': 'm', 'system': 's', 'messages': [{'role': 'user', 'content': [{'type': 'image', 'source': {'type': 'base64', 'media_type': 'image/png', 'data': data}}]}]})
    for mt in ['image/png', 'IMAGE/PNG ', 'image/png; charset=utf-8', ';x', '']:
        add(f'anthropic image media type {mt!r}', ['attachments.mediatype'], {'model': 'm', 'system': 's', 'messages': [{'role': 'user', 'content': [{'type': 'image', 'source': {'type': 'base64', 'media_type': mt, 'data': HELLO}}]}]})
    add('anthropic image url source', ['attachments.url'], {'model': 'm', 'system': 's', 'messages': [{'role': 'user', 'content': [{'type': 'image', 'source': {'type': 'url', 'url': 'https://e.x/a.png'}}]}]})
    add('anthropic image file source', ['attachments.fileid'], {'model': 'm', 'system': 's', 'messages': [{'role': 'user', 'content': [{'type': 'image', 'source': {'type': 'file', 'file_id': 'file_1'}}]}]})
    add('anthropic image source data url', ['attachments.data'], {'model': 'm', 'system': 's', 'messages': [{'role': 'user', 'content': [{'type': 'image', 'source': {'type': 'base64', 'media_type': 'image/gif', 'data': f'data:image/png;base64,{HELLO}'}}]}]})
    add('anthropic document text source', ['attachments.text'], {'model': 'm', 'system': 's', 'messages': [{'role': 'user', 'content': [{'type': 'document', 'source': {'type': 'text', 'media_type': 'text/plain; charset=utf-8', 'data': 'hello'}, 'title': 'T', 'citations': {'enabled': True}}]}]})
    add('anthropic document content source', ['attachments.content'], {'model': 'm', 'system': 's', 'messages': [{'role': 'user', 'content': [{'type': 'document', 'source': {'type': 'content', 'content': [{'type': 'text', 'text': 'chunk'}]}}]}]})
    add('anthropic document pdf', ['attachments.base64'], {'model': 'm', 'system': 's', 'messages': [{'role': 'user', 'content': [{'type': 'document', 'source': {'type': 'base64', 'media_type': 'application/pdf', 'data': HELLO}, 'cache_control': {'type': 'ephemeral'}}]}]})
    add('generic image data + mediaType', ['attachments'], gen([{'role': 'user', 'content': [{'type': 'image', 'data': HELLO, 'mediaType': 'image/png'}]}]))
    add('generic image path', ['attachments.path'], gen([{'role': 'user', 'content': [{'type': 'image', 'path': './a.png'}]}]))
    add('generic image mime_type', ['attachments.mediatype'], gen([{'role': 'user', 'content': [{'type': 'image', 'data': HELLO, 'mime_type': 'Image/PNG;q=1'}]}]))
    add('generic image mimeType', ['attachments.mediatype'], gen([{'role': 'user', 'content': [{'type': 'image', 'data': HELLO, 'mimeType': 'image/png'}]}]))
    add('generic image image string', ['attachments'], gen([{'role': 'user', 'content': [{'type': 'image', 'image': 'https://e.x/a.png'}]}]))
    add('generic image normalized form', ['idempotent'], gen([{'role': 'user', 'content': [{'type': 'image', 'image': {'sha256': 'ab', 'mediaType': 'image/png'}}]}]))
    add('generic image textSha256 form', ['idempotent'], gen([{'role': 'user', 'content': [{'type': 'image', 'image': {'textSha256': 'cd'}}]}]))
    add('generic image unknown object', ['attachments.other'], gen([{'role': 'user', 'content': [{'type': 'image', 'image': {'weird': 1}}]}]))
    add('input_audio mp3', ['attachments.audio'], user([{'type': 'input_audio', 'input_audio': {'data': HELLO, 'format': 'mp3'}}]))
    add('input_audio WAV', ['attachments.audio'], user([{'type': 'input_audio', 'input_audio': {'data': HELLO, 'format': 'WAV'}}]))
    add('input_audio flac', ['attachments.audio'], user([{'type': 'input_audio', 'input_audio': {'data': HELLO, 'format': 'flac'}}]))
    add('audio with mediaType wins', ['attachments.audio'], gen([{'role': 'user', 'content': [{'type': 'audio', 'audio': {'data': HELLO, 'format': 'mp3', 'mediaType': 'audio/x'}}]}]))
    add('audio part itself', ['attachments.audio'], gen([{'role': 'user', 'content': [{'type': 'audio', 'data': HELLO, 'format': 'mp3'}]}]))
    add('openai file part', ['attachments.file'], user([{'type': 'file', 'file': {'file_data': f'data:application/pdf;base64,{HELLO}', 'filename': 'a.pdf'}}]))
    add('openai file id', ['attachments.fileid'], user([{'type': 'file', 'file': {'file_id': 'file-9'}}]))
    add('openai file unknown holder', ['attachments.other'], user([{'type': 'file', 'file': {'what': 1}}]))
    add('responses input_file', ['attachments.file'], {'model': 'm', 'instructions': 'i', 'input': [{'role': 'user', 'content': [{'type': 'input_file', 'file_data': HELLO, 'filename': 'f.txt'}]}]})
    add('responses input_file url', ['attachments.file'], {'model': 'm', 'instructions': 'i', 'input': [{'role': 'user', 'content': [{'type': 'input_file', 'file_url': 'https://e.x/f.pdf'}]}]})
    # Null (or []) members are absent inside attachments too.
    add('image_url: null is no image', ['attachments.null'], user([{'type': 'image_url', 'image_url': None, 'detail': 'low'}]))
    add('image_url: absent is no image', ['attachments.null'], user([{'type': 'image_url', 'detail': 'low'}]))
    add('input_audio: null media_type leaves the format', ['attachments.null'], user([{'type': 'input_audio', 'input_audio': {'data': HELLO, 'format': 'mp3', 'media_type': None}}]))
    add('file: null filename is absent', ['attachments.null'], user([{'type': 'file', 'file': {'file_id': 'file-9', 'filename': None}}]))
    add('file: null part filename falls back to the holder', ['attachments.null'], user([{'type': 'file', 'filename': None, 'file': {'file_id': 'file-9', 'filename': 'b.pdf'}}]))
    add('file part with content', ['attachments.content'], gen([{'role': 'user', 'content': [{'type': 'file', 'content': 'inline'}]}]))
    add('AI SDK file part', ['attachments.file', 'aisdk'], {'model': 'm', 'prompt': [{'role': 'user', 'content': [{'type': 'file', 'data': HELLO, 'mediaType': 'image/png'}]}]})
    add('file part filename from holder', ['attachments.file'], user([{'type': 'file', 'file': {'file_id': 'f', 'filename': 'x.pdf'}}]))

    # Tool calls, arguments, ids.
    args_cases = [('object', '{"city":"Paris"}'), ('respelled', ' { "city" : "Paris", "n": 1.0E0 } '), ('array', '[]'), ('null text', 'null'),
                  ('number', '42'), ('invalid', '{"city":'), ('duplicate names', '{"a":1,"a":2}'), ('lone surrogate', '{"a":"\\udc00"}'),
                  ('overflow', '{"a":1e400}'), ('empty string', ''), ('escaped pair', '{"e":"\\ud83d\\ude00"}')]
    for n, a in args_cases:
        add(f'tool call arguments {n}', ['arguments'], {'model': 'm', 'messages': [{'role': 'assistant', 'content': None, 'tool_calls': [{'id': 'c1', 'type': 'function', 'function': {'name': 'f', 'arguments': a}}]}]})
    add('tool call arguments object value', ['arguments'], {'model': 'm', 'messages': [{'role': 'assistant', 'tool_calls': [{'id': 'c1', 'type': 'function', 'function': {'name': 'f', 'arguments': {'x': 1}}}]}]})
    add('tool call arguments null', ['arguments'], {'model': 'm', 'messages': [{'role': 'assistant', 'tool_calls': [{'id': 'c1', 'function': {'name': 'f', 'arguments': None}}]}]})
    add('tool call type null', ['null', 'toolcalls'], {'model': 'm', 'messages': [{'role': 'assistant', 'tool_calls': [{'id': 'c1', 'type': None, 'index': 0, 'function': {'name': 'f', 'arguments': '{}'}}]}]})
    add('tool call custom type', ['toolcalls'], {'model': 'm', 'messages': [{'role': 'assistant', 'tool_calls': [{'id': 'c1', 'type': 'custom', 'index': 3, 'custom': {'name': 'g', 'input': 'raw'}}]}]})
    add('tool call not object', ['toolcalls'], {'model': 'm', 'messages': [{'role': 'assistant', 'tool_calls': ['x']}]})
    add('tool call name null', ['null'], {'model': 'm', 'messages': [{'role': 'assistant', 'tool_calls': [{'id': 'c1', 'function': {'name': None, 'arguments': '{}'}}]}]})
    add('legacy function_call', ['legacy'], {'model': 'm', 'messages': [{'role': 'assistant', 'content': None, 'function_call': {'name': 'f', 'arguments': '{"a":1}'}}, {'role': 'function', 'name': 'f', 'content': 'ok'}], 'functions': [{'name': 'f', 'parameters': {}}]})
    add('normalized function_call part', ['idempotent'], gen([{'role': 'assistant', 'content': [{'type': 'function_call', 'name': 'f', 'arguments': {'a': 1}}]}]))
    add('normalized tool_call part', ['idempotent'], gen([{'role': 'assistant', 'content': [{'type': 'tool_call', 'id': 'call_0', 'name': 'f', 'arguments': [], 'argumentsText': None}]}]))
    add('ids: numbering starts at call_0, in order', ['ids'], {'model': 'm', 'messages': [
        {'role': 'assistant', 'content': [{'type': 'text', 'text': 'x'}], 'tool_calls': [{'id': 'B', 'function': {'name': 'f', 'arguments': '{}'}}, {'id': 'A', 'function': {'name': 'f', 'arguments': '{}'}}]},
        {'role': 'tool', 'tool_call_id': 'A', 'content': 'a'}, {'role': 'tool', 'tool_call_id': 'B', 'content': 'b'}]})
    add('ids: swapped results differ', ['ids'], {'model': 'm', 'messages': [
        {'role': 'assistant', 'tool_calls': [{'id': 'B', 'function': {'name': 'f', 'arguments': '{}'}}, {'id': 'A', 'function': {'name': 'f', 'arguments': '{}'}}]},
        {'role': 'tool', 'tool_call_id': 'B', 'content': 'a'}, {'role': 'tool', 'tool_call_id': 'A', 'content': 'b'}]})
    add('ids: number and string ids differ', ['ids'], {'model': 'm', 'messages': [{'role': 'assistant', 'tool_calls': [{'id': 1, 'function': {'name': 'f'}}, {'id': '1', 'function': {'name': 'f'}}]}]})
    add('ids: object ids are one id whatever their key order', ['ids'], {'model': 'm', 'messages': [
        {'role': 'assistant', 'tool_calls': [{'id': {'a': 1, 'b': 2}, 'function': {'name': 'f', 'arguments': '{}'}}]},
        {'role': 'tool', 'tool_call_id': {'b': 2, 'a': 1}, 'content': 'x'}]})
    add('ids: anthropic object ids, reordered in the result', ['ids'], {'model': 'claude', 'max_tokens': 8, 'messages': [
        {'role': 'assistant', 'content': [{'type': 'tool_use', 'id': {'z': [1, {'y': 2, 'x': 1}], 'a': 'k'}, 'name': 'f', 'input': {}}]},
        {'role': 'user', 'content': [{'type': 'tool_result', 'tool_use_id': {'a': 'k', 'z': [1, {'x': 1, 'y': 2}]}, 'content': 'r'}]}]})
    add('ids: result without call', ['ids'], {'model': 'm', 'messages': [{'role': 'tool', 'tool_call_id': 'zz', 'content': 'x'}]})
    add('ids: tool_call_id on a user message', ['ids', 'tool_call_id'], {'model': 'm', 'messages': [{'role': 'user', 'tool_call_id': 'q', 'content': 'x'}]})
    add('ids: tool_call_id numbered before content', ['ids'], gen([{'role': 'tool', 'tool_call_id': 'R', 'content': [{'type': 'tool_use', 'id': 'U', 'name': 'f', 'input': {}}]}]))
    add('ids: system first', ['ids'], {'model': 'm', 'system': [{'type': 'tool_use', 'id': 'S', 'name': 'f', 'input': {}}], 'messages': [{'role': 'assistant', 'content': [{'type': 'tool_use', 'id': 'M', 'name': 'f', 'input': {}}]}]})
    add('ids: unknown part ids', ['ids', 'unknown'], gen([{'role': 'assistant', 'content': [{'type': 'server_tool_use', 'id': 'srv_1', 'name': 'web_search', 'input': {}}, {'type': 'web_search_tool_result', 'tool_use_id': 'srv_1', 'content': []}, {'type': 'x_call', 'id': 'q', 'call_id': 'w'}]}]))
    # Dangling ids (a result whose call is not in the request: Responses previous_response_id)
    # are kept as given, so swapping which call an output answers changes the key.
    add('ids: dangling outputs keep their ids (previous_response_id)', ['ids', 'dangling'], {'model': 'gpt-4.1', 'previous_response_id': 'resp_1', 'input': [
        {'type': 'function_call_output', 'call_id': 'call_PARIS', 'output': 'sunny'}, {'type': 'function_call_output', 'call_id': 'call_ROME', 'output': '10:00'}]})
    add('ids: dangling outputs swapped', ['ids', 'dangling'], {'model': 'gpt-4.1', 'previous_response_id': 'resp_1', 'input': [
        {'type': 'function_call_output', 'call_id': 'call_ROME', 'output': 'sunny'}, {'type': 'function_call_output', 'call_id': 'call_PARIS', 'output': '10:00'}]})
    add('ids: dangling ids still count for the numbering; output items, numbers', ['ids', 'dangling', 'unknown'], {'model': 'gpt-5', 'input': [
        {'type': 'custom_tool_call_output', 'call_id': 'ct_1', 'output': '1'}, {'type': 'function_call', 'call_id': 'fc_2', 'name': 'f', 'arguments': '{}'},
        {'type': 'function_call_output', 'call_id': 'fc_2', 'output': 'ok'}, {'role': 'tool', 'tool_call_id': 7, 'content': 'n'}]})
    add('ids: a dangling id spelled call_<digits> keeps its positional name', ['ids', 'dangling'], gen([
        {'role': 'assistant', 'content': None, 'tool_calls': [{'id': 'X', 'type': 'function', 'function': {'name': 'f', 'arguments': '{}'}}]},
        {'role': 'tool', 'tool_call_id': 'X', 'content': 'a'}, {'role': 'tool', 'tool_call_id': 'call_0', 'content': 'b'}]))
    add('ids: a result before its call is not dangling', ['ids', 'dangling'], gen([
        {'role': 'tool', 'tool_call_id': 'z', 'content': 'early'},
        {'role': 'assistant', 'content': None, 'tool_calls': [{'id': 'z', 'type': 'function', 'function': {'name': 'f', 'arguments': '{}'}}]}]))
    add('anthropic tool_result is_error and list content', ['toolresults'], {'model': 'm', 'system': 's', 'messages': [{'role': 'user', 'content': [{'type': 'tool_result', 'tool_use_id': 't', 'is_error': True, 'content': [{'type': 'text', 'text': 'boom'}]}]}]})
    add('anthropic tool_result is_error false dropped', ['toolresults'], {'model': 'm', 'system': 's', 'messages': [{'role': 'user', 'content': [{'type': 'tool_result', 'tool_use_id': 't', 'is_error': False, 'content': 'ok'}]}]})
    add('anthropic tool_use input null', ['arguments'], {'model': 'm', 'system': 's', 'messages': [{'role': 'assistant', 'content': [{'type': 'tool_use', 'id': 't', 'name': 'f', 'input': None}]}]})
    add('anthropic thinking', ['thinking'], {'model': 'm', 'system': 's', 'messages': [{'role': 'assistant', 'content': [{'type': 'thinking', 'thinking': 'hmm', 'signature': 'SIG'}, {'type': 'redacted_thinking', 'data': 'opaque'}, {'type': 'text', 'text': 'ok'}]}]})
    add('anthropic thinking null', ['null'], {'model': 'm', 'system': 's', 'messages': [{'role': 'assistant', 'content': [{'type': 'thinking', 'thinking': None}]}]})

    # Tool results split; Responses join.
    add('split: user tool_results then text', ['split'], ANTHROPIC | {'messages': ANTHROPIC['messages'][:2] + [{'role': 'user', 'content': [{'type': 'tool_result', 'tool_use_id': 'toolu_1', 'content': '21C'}, {'type': 'text', 'text': 'More?'}]}]})
    add('split: text, result, text', ['split'], gen([{'role': 'user', 'name': 'u', 'content': [{'type': 'text', 'text': 'a'}, {'type': 'tool_result', 'tool_use_id': 'x', 'content': 'r'}, {'type': 'text', 'text': 'b'}]}]))
    add('split: assistant message is not split', ['split'], gen([{'role': 'assistant', 'content': [{'type': 'tool_result', 'tool_use_id': 'x', 'content': 'r'}]}]))
    add('join: assistant text then calls', ['join'], {'model': 'm', 'instructions': 'i', 'input': [
        {'role': 'user', 'content': 'q'},
        {'type': 'message', 'role': 'assistant', 'id': 'msg', 'status': 'completed', 'content': [{'type': 'output_text', 'text': 'Checking.', 'annotations': []}]},
        {'type': 'function_call', 'call_id': 'a', 'name': 'f', 'arguments': '{}'},
        {'type': 'function_call', 'call_id': 'b', 'name': 'f', 'arguments': '{}'},
        {'type': 'function_call_output', 'call_id': 'a', 'output': '1'},
        {'type': 'function_call_output', 'call_id': 'b', 'output': [{'type': 'input_text', 'text': '2'}]}]})
    add('join: call after user is not joined', ['join'], {'model': 'm', 'input': [{'role': 'user', 'content': 'q'}, {'type': 'function_call', 'call_id': 'a', 'name': 'f', 'arguments': '{}'}]})
    add('responses: item_reference kept', ['responses.items'], {'model': 'm', 'input': [{'type': 'item_reference', 'id': 'msg_123'}]})
    add('responses: reasoning item', ['responses.items'], {'model': 'm', 'input': [{'type': 'reasoning', 'id': 'rs_1', 'status': 'x', 'summary': [], 'encrypted_content': 'E'}]})
    add('responses: web_search_call item', ['responses.items', 'ids'], {'model': 'm', 'input': [{'type': 'web_search_call', 'id': 'ws_1', 'status': 'completed', 'action': {'query': 'q'}}]})
    add('responses: input null', ['layout'], {'model': 'm', 'instructions': 'i', 'input': None})
    add('responses: instructions list', ['layout'], {'model': 'm', 'instructions': [{'type': 'input_text', 'text': 'Be brief.'}], 'input': 'hi'})

    # Tools.
    add('tools: sorted by name, ties by bytes', ['tools.sort'], {'model': 'm', 'messages': [], 'tools': [
        {'type': 'function', 'function': {'name': 'b'}}, {'type': 'function', 'function': {'name': 'a', 'description': 'z'}}, {'type': 'function', 'function': {'name': 'a', 'description': 'y'}}, {'type': 'web_search'}]})
    add('tools: UTF-16 order', ['tools.sort'], {'model': 'm', 'messages': [], 'tools': [{'type': 'function', 'function': {'name': '\ufb33'}}, {'type': 'function', 'function': {'name': '😂'}}]})
    add('tools: responses function', ['tools'], {'model': 'm', 'input': 'x', 'tools': [{'type': 'function', 'name': 'f', 'parameters': {'type': 'object'}, 'strict': True}]})
    add('tools: anthropic with cache_control', ['tools'], {'model': 'm', 'system': 's', 'messages': [], 'tools': [{'name': 'f', 'input_schema': {'type': 'object'}, 'cache_control': {'type': 'ephemeral'}}]})
    add('tools: anthropic built-in', ['tools.builtin'], {'model': 'm', 'system': 's', 'messages': [], 'tools': [{'type': 'bash_20250124', 'name': 'bash'}]})
    add('tools: custom with input_schema', ['tools'], {'model': 'm', 'system': 's', 'messages': [], 'tools': [{'type': 'custom', 'name': 'f', 'input_schema': {}}]})
    add('tools: type null', ['null', 'tools'], {'model': 'm', 'system': 's', 'messages': [], 'tools': [{'type': None, 'name': 'f', 'input_schema': {'type': 'object'}}]})
    add('tools: description null, parameters []', ['null', 'tools'], {'model': 'm', 'messages': [], 'tools': [{'type': 'function', 'function': {'name': 'f', 'description': None, 'parameters': []}}]})
    add('tools: parameters null falls to input_schema', ['tools'], gen([], tools=[{'name': 'f', 'parameters': None, 'input_schema': {'a': 1}}]))
    add('tools: AI SDK inputSchema with jsonSchema', ['tools', 'aisdk'], gen([], tools=[{'type': 'function', 'name': 'f', 'inputSchema': {'jsonSchema': {'type': 'object'}}}]))
    add('tools: AI SDK tools map', ['tools', 'aisdk'], {'model': 'm', 'prompt': 'x', 'tools': {'weather': {'description': 'W', 'inputSchema': {'type': 'object'}}, 'b': 'odd'}})
    add('tools: non-object tool', ['tools'], {'model': 'm', 'messages': [], 'tools': ['x', 7]})
    add('tools: legacy functions', ['tools.legacy'], {'model': 'm', 'messages': [], 'functions': [{'name': 'f', 'parameters': {}}], 'tools': [{'type': 'function', 'function': {'name': 'f', 'parameters': {}}}]})
    add('tools: wrapper members kept', ['tools'], {'model': 'm', 'messages': [], 'tools': [{'type': 'function', 'function': {'name': 'f'}, 'x_extra': 1}]})

    # ignoreArgs and volatileKeys.
    add('ignoreArgs: temperature', ['ignoreArgs'], {**CHAT, 'temperature': 0}, {'ignoreArgs': ['temperature']})
    add('ignoreArgs: tools', ['ignoreArgs'], CHAT_TOOLS, {'ignoreArgs': ['tools']})
    add('ignoreArgs: model', ['ignoreArgs'], CHAT, {'ignoreArgs': ['model']})
    add('ignoreArgs: messages', ['ignoreArgs'], CHAT, {'ignoreArgs': ['messages']})
    add('ignoreArgs: system after detection', ['ignoreArgs'], ANTHROPIC, {'ignoreArgs': ['system']})
    add('ignoreArgs: context', ['ignoreArgs'], GENERIC, {'ignoreArgs': ['context']})
    add('ignoreArgs: instructions', ['ignoreArgs'], RESPONSES, {'ignoreArgs': ['instructions']})
    add('ignoreArgs: stream', ['ignoreArgs'], {**CHAT, 'stream': True}, {'ignoreArgs': ['stream']})
    add('ignoreArgs: prompt', ['ignoreArgs'], VERCEL, {'ignoreArgs': ['prompt']})
    add('volatileKeys: timestamp', ['volatileKeys'], GENERIC, {'volatileKeys': ['timestamp']})
    add('volatileKeys: role incl. system', ['volatileKeys'], ANTHROPIC, {'volatileKeys': ['role']})
    add('volatileKeys: inside arguments and schema', ['volatileKeys'], CHAT_TOOLS, {'volatileKeys': ['city', 'type']})
    add('volatileKeys: id after renumbering', ['volatileKeys'], CHAT_TOOLS, {'volatileKeys': ['id']})

    # Shapes from clients.
    add('vercel: prompt string', ['prompt'], {'model': 'm', 'prompt': 'hi'})
    add('vercel: model object', ['model'], {'model': {'modelId': 'gpt-4o', 'provider': 'openai.chat', 'specificationVersion': 'v2'}, 'prompt': 'hi'})
    add('vercel: model object without modelId', ['model'], {'model': {'id': 'x'}, 'prompt': 'hi'})
    add('vercel: messages then prompt', ['prompt'], {'model': 'm', 'messages': [{'role': 'user', 'content': 'a'}], 'prompt': 'b', 'context': {}})
    add('vercel: prompt list with AI SDK parts', ['aisdk'], {'model': 'm', 'prompt': [
        {'role': 'system', 'content': 'Be brief.'},
        {'role': 'user', 'content': [{'type': 'text', 'text': 'Weather?'}]},
        {'role': 'assistant', 'content': [{'type': 'reasoning', 'text': 'hm'}, {'type': 'tool-call', 'toolCallId': 't1', 'toolName': 'weather', 'input': {'city': 'Paris'}, 'providerOptions': {'x': 1}}]},
        {'role': 'tool', 'content': [{'type': 'tool-result', 'toolCallId': 't1', 'toolName': 'weather', 'output': {'type': 'json', 'value': {'c': 21}}}]},
        {'role': 'tool', 'content': [{'type': 'tool-result', 'toolCallId': 't1', 'toolName': 'weather', 'output': {'type': 'error-text', 'value': 'down'}}]},
        {'role': 'tool', 'content': [{'type': 'tool-result', 'toolCallId': 't1', 'toolName': 'weather', 'result': 'v4 text', 'isError': True}]},
        {'role': 'assistant', 'content': [{'type': 'tool-call', 'toolCallId': 't2', 'toolName': 'w', 'args': '{"a": 1}'}]}],
        'maxOutputTokens': 100, 'abortSignal': {}, 'maxRetries': 2})
    lc = lambda kind, **kw: {'lc': 1, 'type': 'constructor', 'id': ['langchain_core', 'messages', kind], 'kwargs': kw}
    add('langchain: serialized messages', ['langchain'], {'model': 'm', 'messages': [
        lc('SystemMessage', content='Be brief.', additional_kwargs={}, response_metadata={}),
        lc('HumanMessage', content='Weather?', id='h1'),
        lc('AIMessageChunk', content='', tool_calls=[{'name': 'weather', 'args': {'city': 'Paris'}, 'id': 'call_1', 'type': 'tool_call'}], usage_metadata={'x': 1}),
        lc('ToolMessage', content='21C', tool_call_id='call_1', name='weather'),
        lc('ChatMessage', content='hi', role='narrator'),
        lc('FunctionMessage', content='x', name='f')]})
    add('langchain: plain object with lc_namespace', ['langchain'], gen([{'lc_namespace': ['langchain_core', 'messages'], 'content': 'x', 'role': 'user'}]))

    # Embeddings.
    add('embeddings: string input', ['embeddings'], {'model': 'text-embedding-3-small', 'input': 'hello'})
    add('embeddings: user dropped', ['embeddings', 'options.dropped'], {**EMBED, 'user': 'u-1', 'encoding_format': 'float'})
    add('embeddings: null input', ['embeddings'], {'model': 'text-embedding-3-small', 'input': None})
    add('embeddings: empty token list', ['embeddings'], {'model': 'm', 'input': [], 'dimensions': 3})
    add('embeddings: view re-normalized', ['idempotent', 'embeddings'], {'model': 'm', 'input': ['a'], 'options': {'dimensions': 3, 'encoding_format': 'float'}})
    add('embeddings: ignore input', ['embeddings', 'ignoreArgs'], EMBED, {'ignoreArgs': ['input', 'model']})
    add('embeddings: context is an option', ['embeddings'], {**EMBED, 'context': {'a': 1}})

    # Signature and context keys.
    add('signature: context keys sorted UTF-16', ['signature'], {'messages': [], 'tools': [{'name': 'b'}, {'name': 'a'}, {'name': 'a'}, {'x': 1}], 'context': {'b': 1, 'a': 2, '\ufb33': 0, '😂': 1}})
    add('signature: context not object', ['signature'], {'messages': [], 'context': [1], 'system': 'x'})
    add('generic: system string', ['layout'], {'messages': [{'role': 'user', 'content': 'x'}], 'system': 'S', 'context': {}})
    add('generic: empty system', ['layout'], {'messages': [{'role': 'user', 'content': 'x'}], 'system': '', 'context': {}})

    # Same conversation across shapes (path hashes).
    add('cross: openai tools conversation', ['cross'], {'model': 'm', 'messages': [{'role': 'system', 'content': 'S'}, {'role': 'user', 'content': 'q'}, {'role': 'assistant', 'content': 'c', 'tool_calls': [{'id': 'a', 'type': 'function', 'function': {'name': 'f', 'arguments': '{"x":1}'}}]}, {'role': 'tool', 'tool_call_id': 'a', 'content': 'r'}, {'role': 'user', 'content': 'more'}]})
    add('cross: anthropic tools conversation', ['cross'], {'model': 'm', 'system': 'S', 'messages': [{'role': 'user', 'content': 'q'}, {'role': 'assistant', 'content': [{'type': 'text', 'text': 'c'}, {'type': 'tool_use', 'id': 'b', 'name': 'f', 'input': {'x': 1}}]}, {'role': 'user', 'content': [{'type': 'tool_result', 'tool_use_id': 'b', 'content': 'r'}, {'type': 'text', 'text': 'more'}]}]})
    add('cross: responses tools conversation', ['cross'], {'model': 'm', 'instructions': 'S', 'input': [{'role': 'user', 'content': 'q'}, {'role': 'assistant', 'content': 'c'}, {'type': 'function_call', 'call_id': 'z', 'name': 'f', 'arguments': '{"x": 1}'}, {'type': 'function_call_output', 'call_id': 'z', 'output': 'r'}, {'role': 'user', 'content': 'more'}]})

    # Google Gemini (docs/hash-spec.md, "Google Gemini").
    gem_ep = lambda op, model='gemini-2.5-flash', q='': {'endpoint': {'method': 'POST', 'url': f'/v1beta/models/{model}:{op}{q}'}}
    GEM = {
        'systemInstruction': {'parts': [{'text': 'Be brief.'}]},
        'contents': [{'role': 'user', 'parts': [{'text': 'Weather in Paris?'}]}],
        'tools': [{'functionDeclarations': [{'name': 'weather', 'description': 'Weather', 'parameters': {'type': 'OBJECT', 'properties': {'city': {'type': 'STRING'}}}}]}],
        'generationConfig': {'temperature': 0.7, 'maxOutputTokens': 256},
        'safetySettings': [{'category': 'HARM_CATEGORY_HATE_SPEECH', 'threshold': 'BLOCK_NONE'}, {'category': 'HARM_CATEGORY_DANGEROUS_CONTENT', 'threshold': 'BLOCK_ONLY_HIGH'}],
    }
    GEM_SNAKE = {
        'system_instruction': {'parts': [{'text': 'Be brief.'}]},
        'contents': [{'role': 'user', 'parts': [{'text': 'Weather in Paris?'}]}],
        'tools': [{'function_declarations': [{'name': 'weather', 'description': 'Weather', 'parameters': {'type': 'OBJECT', 'properties': {'city': {'type': 'STRING'}}}}]}],
        'generation_config': {'max_output_tokens': 256, 'temperature': 0.7},
        'safety_settings': [{'threshold': 'BLOCK_ONLY_HIGH', 'category': 'HARM_CATEGORY_DANGEROUS_CONTENT'}, {'category': 'HARM_CATEGORY_HATE_SPEECH', 'threshold': 'BLOCK_NONE'}],
    }
    add('gemini: base, model from the path', ['gemini', 'gemini.route'], GEM, gem_ep('generateContent'))
    add('gemini: snake_case names and reordered settings key alike', ['gemini', 'gemini.names'], GEM_SNAKE, gem_ep('generateContent'))
    add('gemini: detected without a route, model from the body', ['gemini', 'gemini.detection'], {**GEM, 'model': 'models/gemini-2.5-flash'})
    add('gemini: provider option', ['gemini', 'options.provider'], {'contents': []}, {'provider': 'gemini'})
    add('gemini: streamGenerateContent with alt=sse', ['gemini', 'gemini.route'], GEM, gem_ep('streamGenerateContent', q='?alt=sse'))
    add('gemini: streamGenerateContent as a JSON array', ['gemini', 'gemini.route'], GEM, gem_ep('streamGenerateContent'))
    add('gemini: alt=json is the default', ['gemini', 'gemini.route'], GEM, gem_ep('generateContent', q='?alt=json&key=x'))
    add('gemini: countTokens', ['gemini', 'gemini.route'], {'contents': GEM['contents']}, gem_ep('countTokens'))
    add('gemini: countTokens wrapping a request', ['gemini', 'gemini.route'], {'generateContentRequest': {**GEM, 'model': 'models/gemini-2.5-flash'}}, gem_ep('countTokens'))
    add('gemini: Vertex AI path', ['gemini', 'gemini.route'], GEM, {'endpoint': {'method': 'POST', 'url': '/v1/projects/p-1/locations/us-central1/publishers/google/models/gemini-2.5-pro:generateContent'}})
    add('gemini: tuned model path, escaped model', ['gemini', 'gemini.route'], GEM, {'endpoint': {'url': '/v1beta/tunedModels/my%2Dmodel:generateContent'}})
    add('gemini: not POST is no route', ['gemini', 'gemini.detection'], GEM, {'endpoint': {'method': 'GET', 'url': '/v1beta/models/gemini-2.5-flash:generateContent'}})
    add('gemini: chat body on an OpenAI path stays chat', ['gemini', 'gemini.detection'], CHAT, {'endpoint': {'method': 'POST', 'url': '/v1/chat/completions'}})
    add('gemini: attachments by digest', ['gemini', 'gemini.parts', 'attachments'], {'contents': [{'role': 'user', 'parts': [
        {'text': 'Look'}, {'inlineData': {'mimeType': 'image/png', 'data': PNG}}, {'inline_data': {'mime_type': 'audio/WAV', 'data': HELLO}},
        {'inlineData': {'mimeType': 'application/pdf', 'data': 'not base64!'}, 'videoMetadata': {'startOffset': '1s'}},
        {'fileData': {'mimeType': 'video/mp4', 'fileUri': 'gs://bucket/v.mp4', 'displayName': 'v'}}, {'file_data': {'file_uri': 'files/abc', 'mime_type': 'image/jpeg'}},
        {'fileData': {'mimeType': 'text/plain'}}, {'inlineData': {}}]}]}, gem_ep('generateContent'))
    add('gemini: thoughts and thought signatures', ['gemini', 'gemini.parts'], {'contents': [
        {'role': 'user', 'parts': [{'text': 'Think'}]},
        {'role': 'model', 'parts': [{'text': 'hmm', 'thought': True, 'thoughtSignature': 'c2ln'}, {'text': '', 'thought': True}, {'text': 'Answer', 'thought_signature': 'eHh4'}, {'text': ''}, {'text': None}]}]}, gem_ep('generateContent'))
    add('gemini: calls with and without ids, answered out of order', ['gemini', 'gemini.calls', 'ids'], {'contents': [
        {'role': 'user', 'parts': [{'text': 'Weather in Paris and Rome?'}]},
        {'role': 'model', 'parts': [{'functionCall': {'name': 'weather', 'args': {'city': 'Paris'}}}, {'functionCall': {'name': 'weather', 'args': {'city': 'Rome'}}}, {'functionCall': {'name': 'time', 'id': 'c-9', 'args': {}}}]},
        {'role': 'user', 'parts': [{'functionResponse': {'name': 'time', 'id': 'c-9', 'response': {'result': 12}}}, {'functionResponse': {'name': 'weather', 'response': {'output': '21C'}}},
                                   {'functionResponse': {'name': 'weather', 'response': {'temp': 19, 'unit': 'C'}, 'willContinue': False}}, {'function_response': {'name': 'other', 'response': {'name': 'other', 'content': 'x'}}}]},
        {'role': 'function', 'parts': [{'functionResponse': {'name': 'late', 'id': 7, 'response': None}}]}]}, gem_ep('generateContent'))
    add('gemini: other parts and content members', ['gemini', 'gemini.parts'], {'contents': [
        {'role': 'model', 'parts': [{'executableCode': {'language': 'PYTHON', 'code': 'print(1)'}}, {'codeExecutionResult': {'outcome': 'OUTCOME_OK', 'output': '1'}, 'thoughtSignature': 's'},
                                    {'zeta': 1, 'alpha': None, 'beta': [2]}, {'thoughtSignature': 'only'}, 'plain string', '', 5]},
        {'parts': {'text': 'single part, no role'}, 'extra': [], 'note': 'kept'}, {'role': 'critic', 'parts': []}]}, gem_ep('generateContent'))
    add('gemini: tools, built-in tools, parametersJsonSchema', ['gemini', 'gemini.tools'], {'contents': [], 'tools': [
        {'googleSearch': {}}, {'code_execution': {}},
        {'functionDeclarations': [{'name': 'b', 'parametersJsonSchema': {'type': 'object'}}, {'name': 'a', 'description': 'A', 'response': {'type': 'STRING'}}, 'odd'], 'url_context': {}},
        {'function_declarations': [{'name': 'a', 'parameters': {'type': 'OBJECT'}, 'parameters_json_schema': {'type': 'object'}}]}, 3]}, gem_ep('generateContent'))
    add('gemini: generation options', ['gemini', 'gemini.options'], {'contents': [], 'generationConfig': {
        'temperature': 0, 'candidateCount': 1, 'responseMimeType': 'text/plain', 'top_p': 0.9, 'seed': 7, 'stopSequences': ['END'],
        'responseSchema': {'type': 'OBJECT', 'properties': {'snake_case_kept': {'type': 'STRING'}}}, 'thinking_config': {'thinking_budget': 0, 'include_thoughts': True}, 'presencePenalty': None}}, gem_ep('generateContent'))
    add('gemini: defaults only is no generationConfig', ['gemini', 'gemini.options'], {'contents': [], 'generationConfig': {'temperature': 1.0, 'candidateCount': 1, 'response_mime_type': 'text/plain'}}, gem_ep('generateContent'))
    add('gemini: deciding and volatile top-level members', ['gemini', 'gemini.options', 'options.dropped'], {'contents': [], 'toolConfig': {'function_calling_config': {'mode': 'ANY', 'allowedFunctionNames': ['a']}},
        'cachedContent': 'cachedContents/abc', 'labels': {'team': 'x'}, 'user': 'u', 'request_id': 'r', 'requestId': 'q', 'safetySettings': None, 'unknownThing': {'kept': True}}, gem_ep('generateContent'))
    add('gemini: ignoreArgs and volatileKeys', ['gemini', 'ignoreArgs', 'volatileKeys'], GEM_SNAKE, {**gem_ep('generateContent'), 'ignoreArgs': ['generation_config', 'safetySettings'], 'volatileKeys': ['description']})
    add('gemini: ignoring the model', ['gemini', 'ignoreArgs'], GEM, {**gem_ep('generateContent'), 'ignoreArgs': ['model', 'systemInstruction']})
    add('gemini: string system instruction', ['gemini'], {'systemInstruction': 'Be brief.', 'contents': {'role': 'user', 'parts': [{'text': 'hi'}]}}, gem_ep('generateContent'))
    add('gemini: empty system instruction', ['gemini'], {'systemInstruction': {'role': 'system', 'parts': []}, 'contents': []}, gem_ep('generateContent'))
    add('gemini error: contents a string', ['gemini', 'errors'], {'contents': 'hi'}, gem_ep('generateContent'))
    add('gemini error: a content not an object', ['gemini', 'errors'], {'contents': [{'parts': []}, 'hi']}, gem_ep('generateContent'))
    add('gemini error: tools an object', ['gemini', 'errors'], {'contents': [], 'tools': {'googleSearch': {}}}, gem_ep('generateContent'))
    add('gemini error: body not an object', ['gemini', 'errors'], [1], gem_ep('generateContent'))
    add('gemini error: ignoreArgs not a list', ['gemini', 'errors'], GEM, {**gem_ep('generateContent'), 'ignoreArgs': 'x'})
    add('gemini embeddings: embedContent', ['gemini.embeddings'], {'content': {'parts': [{'text': 'hello'}]}, 'taskType': 'RETRIEVAL_QUERY', 'output_dimensionality': 64}, gem_ep('embedContent', 'text-embedding-004'))
    add('gemini embeddings: batch', ['gemini.embeddings'], {'requests': [
        {'model': 'models/text-embedding-004', 'content': {'parts': [{'text': 'hello'}]}}, {'model': 'models/other', 'content': {'parts': [{'text': 'world'}]}},
        {'content': {'parts': [{'text': 'a'}, {'text': 'b'}]}, 'task_type': 'CLUSTERING', 'title': None}, 'odd']}, gem_ep('batchEmbedContents', 'text-embedding-004'))
    add('gemini embeddings: detected without a route', ['gemini.embeddings', 'gemini.detection'], {'model': 'models/text-embedding-004', 'requests': [{'model': 'models/text-embedding-004', 'content': {'parts': [{'text': 'hello'}]}}]})
    add('gemini embeddings: embedContent detected', ['gemini.embeddings', 'gemini.detection'], {'content': {'parts': [{'text': 'hello'}]}})
    add('gemini embeddings: no content', ['gemini.embeddings'], {'taskType': 'X'}, gem_ep('embedContent', 'text-embedding-004'))
    add('cross: gemini tools conversation', ['cross', 'gemini'], {'systemInstruction': {'parts': [{'text': 'S'}]}, 'contents': [
        {'role': 'user', 'parts': [{'text': 'q'}]}, {'role': 'model', 'parts': [{'text': 'c'}, {'functionCall': {'name': 'f', 'args': {'x': 1}}, 'thoughtSignature': 'sig'}]},
        {'role': 'user', 'parts': [{'functionResponse': {'name': 'f', 'response': {'output': 'r'}}}, {'text': 'more'}]}]}, gem_ep('generateContent', 'm'))
    add('cross: gemini embeddings input', ['cross', 'gemini.embeddings'], {'requests': [{'content': {'parts': [{'text': 'hello'}]}}, {'content': {'parts': [{'text': 'world'}]}}]}, gem_ep('batchEmbedContents', 'text-embedding-3-small'))
    return out
