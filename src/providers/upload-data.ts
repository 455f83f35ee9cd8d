/**
 * Requests whose body is a file's bytes whatever their Content-Type says.
 *
 * Google's resumable upload (`POST /upload/v1beta/files`, the Files API of the Gemini API and
 * of Vertex AI) is two requests: a `start` whose body is the file's JSON metadata, answered with
 * an `X-Goog-Upload-URL`, then the data sent to that URL with `X-Goog-Upload-Command: upload,
 * finalize` (or `upload` for a chunk, `finalize` to close). @google/genai sends the data with its
 * default `Content-Type: application/json`, and Google reads it as the file, so the data must be
 * keyed and stored as bytes: read as JSON it was refused (E_JSON) and never reached Google.
 */

type Headers = Record<string, string | string[] | undefined>;

/**
 * Whether the body of a request with these (lower-case) headers is upload data.
 *
 * @example
 * isUploadData({ 'x-goog-upload-command': 'upload, finalize', 'content-type': 'application/json' }) // true
 * isUploadData({ 'x-goog-upload-command': 'start' })                                                // false
 */
export function isUploadData(headers: Headers): boolean {
  const command = headers['x-goog-upload-command'];
  if (command === undefined) return false;
  return /\b(?:upload|finalize)\b/i.test(Array.isArray(command) ? command.join(',') : command);
}
