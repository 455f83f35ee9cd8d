"""The request bodies of test/vectors/request-keys-bedrock.json: every rule of docs/hash-spec.md
("AWS Bedrock Runtime") at least once. Each case names the rules it covers; cases with the same
`same` label are one conversation in several shapes (equal message and path hashes)."""
import base64
import copy

PNG = base64.b64encode(bytes(range(0, 48))).decode('ascii')
PDF = base64.b64encode(b'%PDF-1.4 tapedeck').decode('ascii')
MP3 = base64.b64encode(b'ID3 not really audio').decode('ascii')
PROFILE = 'us.anthropic.claude-sonnet-4-5-20250929-v1:0'
PROFILE_PATH = 'us.anthropic.claude-sonnet-4-5-20250929-v1%3A0'
ARN = 'arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-sonnet-4-5-20250929-v1:0'
ARN_PATH = 'arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3Ainference-profile%2Fus.anthropic.claude-sonnet-4-5-20250929-v1%3A0'


def ep(op, model=PROFILE_PATH, prefix=''):
    return {'endpoint': {'method': 'POST', 'url': f'{prefix}/model/{model}/{op}'}}


CONVERSE = {
    'system': [{'text': 'Be brief.'}],
    'messages': [{'role': 'user', 'content': [{'text': 'Weather in Paris?'}]}],
    'inferenceConfig': {'maxTokens': 256, 'temperature': 0.7, 'topP': 0.9, 'stopSequences': ['END']},
}

# One conversation (text, image, tool call, tool result, answer) in Converse, Anthropic and OpenAI shape.
CONV_TOOLS = {
    'system': [{'text': 'Be brief.'}],
    'messages': [
        {'role': 'user', 'content': [{'text': 'Weather in Paris?'}, {'image': {'format': 'png', 'source': {'bytes': PNG}}}]},
        {'role': 'assistant', 'content': [{'text': 'Checking.'}, {'toolUse': {'toolUseId': 'tooluse_Qx1', 'name': 'weather', 'input': {'city': 'Paris'}}}]},
        {'role': 'user', 'content': [{'toolResult': {'toolUseId': 'tooluse_Qx1', 'content': [{'text': '21C'}]}}]},
        {'role': 'assistant', 'content': [{'text': 'It is 21C.'}]},
    ],
    'toolConfig': {'tools': [{'toolSpec': {'name': 'weather', 'description': 'Weather', 'inputSchema': {'json': {'type': 'object'}}}}]},
}
ANTH_TOOLS = {
    'model': 'claude-sonnet-4-5', 'max_tokens': 256, 'system': 'Be brief.',
    'messages': [
        {'role': 'user', 'content': [{'type': 'text', 'text': 'Weather in Paris?'}, {'type': 'image', 'source': {'type': 'base64', 'media_type': 'image/png', 'data': PNG}}]},
        {'role': 'assistant', 'content': [{'type': 'text', 'text': 'Checking.'}, {'type': 'tool_use', 'id': 'toolu_01', 'name': 'weather', 'input': {'city': 'Paris'}}]},
        {'role': 'user', 'content': [{'type': 'tool_result', 'tool_use_id': 'toolu_01', 'content': '21C'}]},
        {'role': 'assistant', 'content': 'It is 21C.'},
    ],
    'tools': [{'name': 'weather', 'description': 'Weather', 'input_schema': {'type': 'object'}}],
}
OPENAI_TOOLS = {
    'model': 'gpt-4o',
    'messages': [
        {'role': 'system', 'content': 'Be brief.'},
        {'role': 'user', 'content': [{'type': 'text', 'text': 'Weather in Paris?'}, {'type': 'image_url', 'image_url': {'url': 'data:image/png;base64,' + PNG}}]},
        {'role': 'assistant', 'content': 'Checking.', 'tool_calls': [{'id': 'call_9', 'type': 'function', 'function': {'name': 'weather', 'arguments': '{"city":"Paris"}'}}]},
        {'role': 'tool', 'tool_call_id': 'call_9', 'content': '21C'},
        {'role': 'assistant', 'content': 'It is 21C.'},
    ],
    'tools': [{'type': 'function', 'function': {'name': 'weather', 'description': 'Weather', 'parameters': {'type': 'object'}}}],
}
INVOKE = {'anthropic_version': 'bedrock-2023-05-31', 'max_tokens': 256, 'system': 'Be brief.', 'messages': ANTH_TOOLS['messages'], 'tools': ANTH_TOOLS['tools']}


def with_(base, **extra):
    b = copy.deepcopy(base)
    b.update(extra)
    return b


def user(*blocks):
    return {'messages': [{'role': 'user', 'content': list(blocks)}]}


def cases():
    c = []

    def add(name, rules, body, options=None, same=None):
        x = {'name': name, 'rules': rules, 'body': body, 'options': options or {}}
        if same:
            x['same'] = same
        c.append(x)

    # Routes and the model
    add('converse: text, system, inferenceConfig (a sampling temperature is no option)', ['route', 'model', 'inferenceConfig', 'system'], CONVERSE, ep('converse'))
    add('converse-stream: the same body with stream: true', ['route', 'stream'], CONVERSE, ep('converse-stream'))
    add('converse: an ARN model, percent-encoded in the path', ['model'], CONVERSE, ep('converse', ARN_PATH))
    add('converse: a proxy mount prefix before /model', ['route'], CONVERSE, ep('converse', prefix='/bedrock/us-east-1'))
    add('converse: a malformed escape in the model stays as written', ['model'], CONVERSE, ep('converse', 'model%E0%A4%A'))
    add('converse: a query after the path', ['route'], CONVERSE, {'endpoint': {'method': 'POST', 'url': f'/model/{PROFILE_PATH}/converse?x=1'}})
    add('converse: temperature 0 is kept', ['inferenceConfig'], with_(CONVERSE, inferenceConfig={'temperature': 0, 'maxTokens': 10}), ep('converse'))
    add('converse: inferenceConfig with only a sampling temperature and nulls is absent', ['inferenceConfig'], with_(CONVERSE, inferenceConfig={'temperature': 1, 'topP': None}), ep('converse'))
    add('converse: inferenceConfig that is not an object is kept', ['inferenceConfig'], with_(CONVERSE, inferenceConfig=[1, 2]), ep('converse'))
    add('converse: dropped members (requestMetadata, performanceConfig, serviceTier, modelId)', ['dropped'],
        with_(CONVERSE, requestMetadata={'team': 'a'}, performanceConfig={'latency': 'optimized'}, serviceTier={'type': 'flex'}, modelId='other'), ep('converse'))
    add('converse: deciding members kept (additionalModelRequestFields, guardrailConfig, promptVariables, response field paths)', ['options'],
        with_(CONVERSE, additionalModelRequestFields={'top_k': 5, 'thinking': {'type': 'enabled', 'budget_tokens': 1024}}, guardrailConfig={'guardrailIdentifier': 'g1', 'guardrailVersion': '1'},
              promptVariables={'city': {'text': 'Paris'}}, additionalModelResponseFieldPaths=['/stop_sequence']), ep('converse'))
    add('converse: members named like Anthropic layout members are renamed', ['reserved'], with_(CONVERSE, model='x', tools=[{'name': 'y'}], stream=True, context={'a': 1}, functions=[]), ep('converse'))
    add('converse: the DROPPED_ARGS of the chat family are dropped too', ['dropped'], with_(CONVERSE, user='u1', metadata={'a': 1}), ep('converse'))

    # Content blocks
    add('converse: tool round trip, image by digest', ['toolUse', 'toolResult', 'image', 'tools'], CONV_TOOLS, ep('converse'), same='tools')
    add('converse: formats named like Object.prototype properties', ['image', 'document'], {'messages': [{'role': 'user', 'content': [
        {'image': {'format': 'constructor', 'source': {'bytes': PNG}}}, {'image': {'format': '__proto__', 'source': {'bytes': PNG}}},
        {'document': {'format': 'toString', 'name': 'd', 'source': {'bytes': PNG}}}]}]}, ep('converse'))
    add('anthropic: the same conversation', ['across'], ANTH_TOOLS, {}, same='tools')
    add('openai chat: the same conversation', ['across'], OPENAI_TOOLS, {}, same='tools')
    add('invoke: the same conversation as an Anthropic body', ['invoke', 'across'], INVOKE, ep('invoke'), same='tools')
    add('invoke-with-response-stream: stream: true', ['invoke', 'stream'], INVOKE, ep('invoke-with-response-stream'), same='tools')
    add('invoke: a model member is replaced by the path model', ['invoke', 'model'], with_(INVOKE, model='claude-other'), ep('invoke'))
    add('converse: toolResult with json content and status error', ['toolResult', 'json'],
        {'messages': [{'role': 'assistant', 'content': [{'toolUse': {'toolUseId': 't1', 'name': 'f', 'input': {'n': 1.0}}}]},
                      {'role': 'user', 'content': [{'toolResult': {'toolUseId': 't1', 'content': [{'json': {'ok': False, 'n': 1e21}}], 'status': 'error'}}, {'text': 'and?'}]}]}, ep('converse'))
    add('converse: toolResult with status success and extra members', ['toolResult'],
        user({'toolResult': {'toolUseId': 't1', 'content': [{'text': 'x'}], 'status': 'success', 'type': 'tool_result'}}), ep('converse'))
    add('converse: toolResult content that is not an array, toolUse without input', ['toolResult', 'toolUse'],
        {'messages': [{'role': 'assistant', 'content': [{'toolUse': {'toolUseId': 't2', 'name': 'g'}}]}, {'role': 'user', 'content': [{'toolResult': {'toolUseId': 't2', 'content': 'plain'}}]}]}, ep('converse'))
    add('converse: toolUse ids renumbered: two calls, results out of order', ['toolUse'],
        {'messages': [{'role': 'assistant', 'content': [{'toolUse': {'toolUseId': 'b', 'name': 'f', 'input': {}}}, {'toolUse': {'toolUseId': 'a', 'name': 'f', 'input': {}}}]},
                      {'role': 'user', 'content': [{'toolResult': {'toolUseId': 'a', 'content': [{'text': '1'}]}}, {'toolResult': {'toolUseId': 'b', 'content': [{'text': '2'}]}}]}]}, ep('converse'))
    add('converse: image jpeg, s3 image, unknown image format', ['image', 'source'],
        user({'image': {'format': 'jpeg', 'source': {'bytes': PNG}}}, {'image': {'format': 'png', 'source': {'s3Location': {'uri': 's3://bucket/cat.png', 'bucketOwner': '123'}}}},
             {'image': {'format': 'heic', 'source': {'bytes': PNG}}}, {'image': {'source': {'bytes': PNG}}}), ep('converse'))
    add('converse: documents (bytes, text, content, extra members)', ['document', 'source'],
        user({'document': {'format': 'pdf', 'name': 'report', 'source': {'bytes': PDF}}}, {'document': {'format': 'txt', 'name': 'notes', 'source': {'text': 'hello'}}},
             {'document': {'format': 'md', 'name': 'c', 'source': {'content': [{'text': 'part'}, {'cachePoint': {'type': 'default'}}]}, 'citations': {'enabled': True}, 'context': 'ctx'}},
             {'document': {'format': 'docx', 'name': 'w', 'source': {'bytes': PDF}}}, {'document': {'format': 'rtf', 'name': 'r', 'source': {'bytes': PDF}}}), ep('converse'))
    add('openai: the pdf as a file part (no filename: differs by the document name)', ['across'],
        {'model': 'gpt-4o', 'messages': [{'role': 'user', 'content': [{'type': 'file', 'file': {'file_data': 'data:application/pdf;base64,' + PDF, 'filename': 'report'}}]}]})
    add('converse: the pdf alone (same message hash as the OpenAI file part with filename report)', ['document', 'across'],
        user({'document': {'format': 'pdf', 'name': 'report', 'source': {'bytes': PDF}}}), ep('converse'))
    add('converse: video and audio by digest', ['video', 'audio'],
        user({'video': {'format': 'mp4', 'source': {'bytes': PNG}}}, {'video': {'format': 'three_gp', 'source': {'s3Location': {'uri': 's3://b/v.3gp'}}}},
             {'audio': {'format': 'mp3', 'source': {'bytes': MP3}}}, {'video': {'format': 'mkv', 'source': 'raw'}}), ep('converse'))
    add('converse: reasoning text (signature dropped), redacted reasoning, empty reasoning', ['reasoningContent'],
        {'messages': [{'role': 'user', 'content': [{'text': 'think'}]},
                      {'role': 'assistant', 'content': [{'reasoningContent': {'reasoningText': {'text': 'hmm', 'signature': 'sig-abc'}}}, {'reasoningContent': {'redactedContent': 'b64=='}},
                                                        {'reasoningContent': {}}, {'text': 'done'}]}]}, ep('converse'))
    add('converse: the same reasoning with another signature has the same key', ['reasoningContent'],
        {'messages': [{'role': 'user', 'content': [{'text': 'think'}]},
                      {'role': 'assistant', 'content': [{'reasoningContent': {'reasoningText': {'text': 'hmm', 'signature': 'sig-xyz'}}}, {'reasoningContent': {'redactedContent': 'b64=='}},
                                                        {'reasoningContent': {}}, {'text': 'done'}]}]}, ep('converse'))
    add('converse: cachePoint blocks dropped in system, messages and tools', ['cachePoint'],
        {'system': [{'text': 'Be brief.'}, {'cachePoint': {'type': 'default'}}], 'messages': [{'role': 'user', 'content': [{'text': 'Weather in Paris?'}, {'cachePoint': {'type': 'default'}}]}],
         'toolConfig': {'tools': [{'cachePoint': {'type': 'default'}}]}, 'inferenceConfig': {'maxTokens': 256, 'stopSequences': ['END'], 'topP': 0.9}}, ep('converse'))
    add('converse: other blocks kept as given (guardContent, text with a second member, empty text, non-object)', ['blocks'],
        user({'guardContent': {'text': {'text': 'check', 'qualifiers': ['guard_content']}}}, {'text': 'hi', 'extra': 1}, {'text': ''}, 'bare string', 7, {'future': {'x': 1}}), ep('converse'))
    add('converse: toolConfig with toolChoice, a systemTool, a toolSpec without the json wrapper', ['tools', 'toolChoice'],
        {'messages': [{'role': 'user', 'content': [{'text': 'q'}]}],
         'toolConfig': {'tools': [{'toolSpec': {'name': 'b', 'inputSchema': {'type': 'object'}, 'strict': True}}, {'systemTool': {'name': 'web'}}, {'toolSpec': {'name': 'a', 'description': 'A'}}],
                        'toolChoice': {'tool': {'name': 'a'}}}}, ep('converse'))
    add('converse: toolConfig that is not an object, messages with non-object entries', ['tools'],
        {'messages': [{'role': 'user', 'content': [{'text': 'q'}]}, {'role': 'assistant'}], 'toolConfig': 'none'}, ep('converse'))
    add('converse: unicode text and numbers spelled differently in tool input', ['blocks'],
        {'messages': [{'role': 'user', 'content': [{'text': 'Grüße, 東京 \U0001F600'}]}, {'role': 'assistant', 'content': [{'toolUse': {'toolUseId': 'x', 'name': 'f', 'input': {'a': 100, 'b': 0.5, 'c': 1e-7}}}]}]}, ep('converse'))

    # Caller options
    add('converse: ignoreArgs inferenceConfig', ['ignoreArgs'], CONVERSE, dict(ep('converse'), ignoreArgs=['inferenceConfig']))
    add('converse: ignoreArgs reach inferenceConfig members', ['ignoreArgs'], CONVERSE, dict(ep('converse'), ignoreArgs=['maxTokens', 'stopSequences']))
    add('converse: ignoreArgs toolConfig, system, model', ['ignoreArgs'], CONV_TOOLS, dict(ep('converse'), ignoreArgs=['toolConfig', 'system', 'model']))
    add('converse: ignoreArgs messages without messages', ['ignoreArgs'], {'system': [{'text': 's'}]}, dict(ep('converse'), ignoreArgs=['messages']))
    add('converse: volatileKeys inside blocks and tools', ['volatileKeys'], CONV_TOOLS, dict(ep('converse'), volatileKeys=['description', 'city']))
    add('converse: provider option without a route (model from modelId)', ['provider'], with_(CONVERSE, modelId=PROFILE), {'provider': 'bedrock-converse'})
    add('converse body without a route keeps the chat-family key', ['detection'], CONVERSE, {})
    add('converse body sent to /v1/chat/completions keeps the chat-family key', ['detection'], CONVERSE, {'endpoint': {'method': 'POST', 'url': '/v1/chat/completions'}})
    add('converse: a GET to the route is no route', ['route'], CONVERSE, {'endpoint': {'method': 'GET', 'url': f'/model/{PROFILE_PATH}/converse'}})

    # Invoke bodies of other models
    add('invoke: a Converse-shaped body (Amazon Nova messages-v1)', ['invoke'],
        {'schemaVersion': 'messages-v1', 'messages': [{'role': 'user', 'content': [{'text': 'hi'}]}], 'inferenceConfig': {'maxTokens': 10}}, ep('invoke', 'amazon.nova-lite-v1%3A0'))
    add('invoke: a Llama prompt body (generic shape)', ['invoke'], {'prompt': '<s>[INST] hi [/INST]', 'max_gen_len': 64}, ep('invoke', 'meta.llama3-8b-instruct-v1%3A0'))
    add('invoke: ignoreArgs model and max_tokens on an Anthropic body', ['invoke', 'ignoreArgs'], INVOKE, dict(ep('invoke'), ignoreArgs=['model', 'max_tokens']))

    # Errors
    add('converse: a body that is not an object', ['errors'], [1, 2], ep('converse'))
    add('converse: no messages', ['errors'], {'system': [{'text': 's'}]}, ep('converse'))
    add('converse: messages not an array', ['errors'], {'messages': {'role': 'user'}}, ep('converse-stream'))
    add('invoke: a body that is not an object', ['errors'], 42, ep('invoke'))
    add('invoke: no known shape', ['errors'], {'inputText': 'titan'}, ep('invoke', 'amazon.titan-text-express-v1'))
    return c
