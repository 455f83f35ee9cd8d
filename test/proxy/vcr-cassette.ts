// VCR.py cassettes as its YAML serializer lays them out, for the import tests: one interaction
// of a JSON request and a JSON answer, and a cassette of such interactions.

/**
 * One interaction: `body` and `answer` are JSON text, written single-quoted as VCR.py writes
 * them (the texts here hold no single quote).
 */
export const vcrInteraction = (body: string, answer: string, uri = 'https://api.openai.com/v1/chat/completions'): string => `- request:
    body: '${body}'
    headers:
      Content-Type:
      - application/json
    method: POST
    uri: ${uri}
  response:
    body:
      string: '${answer}'
    headers:
      Content-Type:
      - application/json
    status:
      code: 200
      message: OK
`;

/** A cassette of the interactions given, as text. */
export const vcrCassette = (...interactions: string[]): string => `interactions:\n${interactions.join('')}version: 1\n`;
