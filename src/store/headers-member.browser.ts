/** headers-member.ts for browser builds: a page keys a body's header maps as any members (see headers-member.ts). */
import type { Redactor } from './redact.ts';

/** The redactor's copy as it is (see headers-member.ts). */
export function headersMember(_parent: Record<string, unknown>, _given: unknown, redacted: unknown, _r: Pick<Redactor, 'isCredentialHeader'>): unknown {
  return redacted;
}
