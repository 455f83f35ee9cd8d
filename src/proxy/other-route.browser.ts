/**
 * other-route.ts for browser builds: a page replaying a tape keeps the route's general miss
 * sentence (which names the route: the model a URL names, the header values it is filed by), so
 * the comparisons stay out of a bundle with a 100 KB budget (bench/size.mjs).
 */

/** Always undefined in a page (see other-route.ts). */
export function modelOnOtherRoute(_route: string, _routes: ReadonlyMap<string, { readonly count: number }>): string | undefined {
  return undefined;
}

/** Always undefined in a page (see other-route.ts). */
export function queryOnOtherRoute(_route: string, _routes: ReadonlyMap<string, { readonly count: number }>): string | undefined {
  return undefined;
}

/** Always undefined in a page (see other-route.ts). */
export function headersOnOtherRoute(_route: string, _routes: ReadonlyMap<string, { readonly count: number }>): string | undefined {
  return undefined;
}

/** The short sentence in a page (see other-route.ts). */
export function headersOfOldRecording(_route: string, theirs: string, _mine: string): string {
  return `recorded with${theirs || ' other headers'}`;
}

/** Always undefined in a page (see other-route.ts). */
export function streamOnOtherRoute(_route: string, _routes: ReadonlyMap<string, { readonly count: number }>, _recordedOn: (name: string, endpoint: { method: string; url: string }) => boolean): string | undefined {
  return undefined;
}

/** Always undefined in a page (see other-route.ts). */
export function pathOnOtherRoute(_route: string, _other: string): string | undefined {
  return undefined;
}
