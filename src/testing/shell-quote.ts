/**
 * Words for a POSIX shell, for the commands tapedeck prints (record commands, the command that
 * moves a moved test's recordings): a user pastes them as printed.
 */

/**
 * A word for a POSIX shell: as it is when safe, else single-quoted.
 *
 * @example
 * shellQuote('test/chat.test.ts') // 'test/chat.test.ts'
 * shellQuote("^says hello$")      // "'^says hello$'"
 */
export const shellQuote = (s: string): string => (/^[\w./:=@%+-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);
