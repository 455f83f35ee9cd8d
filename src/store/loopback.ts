/**
 * Hosts that name this machine: a test server on one of them takes a new port every run, so its
 * port is not compared where hosts are (names are: `localhost` and `127.0.0.1` are two hosts).
 * In a file of its own: origins.ts compares origins with it, and the conversation tree names
 * hosts with it in builds that swap origins.ts for a page's stand-in (origins.browser.ts).
 *
 * @example
 * isLoopbackHost('127.0.0.1') // true
 * isLoopbackHost('api.openai.com') // false
 */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host.endsWith('.localhost') || host === '[::1]' || /^127(?:\.\d{1,3}){3}$/.test(host);
}
