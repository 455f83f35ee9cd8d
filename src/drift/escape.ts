// Recorded text (model and tool names, finish reasons, answers, tape names) is data from an
// upstream or a file: each report format shows it as text, never as markup or as a command to
// the reader's terminal. One escaper per output, side by side, so the three stay alike.

/**
 * Text for HTML (element content and quoted attributes).
 *
 * @example
 * escapeHtml('<img src=x>') // '&lt;img src=x&gt;'
 */
export const escapeHtml = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

// CommonMark lets a backslash escape any ASCII punctuation; these are the ones that start markup
// mid-line in GitHub's dialect: code spans, emphasis, strikethrough, links and images, raw HTML
// and autolinks, entities, table cells; and a `>` first (a quote in a list item). A `>` further on
// starts nothing, so `12 -> 13` stays readable. A line break would end a table row: a space.
const MD_ACTIVE = /[\\`*_~[\]<&|]|^>/g;

/**
 * Text for one line of Markdown outside HTML blocks (a paragraph, a list item, a table cell).
 *
 * @example
 * escapeMarkdown('<img src=x> | *b*') // '\\<img src=x> \\| \\*b\\*'
 */
export const escapeMarkdown = (s: string): string => s.replace(MD_ACTIVE, '\\$&').replace(/\r\n?|\n/g, ' ');

// C0 controls but tab and line feed, DEL, C1 controls (0x9b is a one-byte CSI on some
// terminals), and the bidirectional overrides and isolates that reorder what is shown.
const TERMINAL_CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/g;

/**
 * Text for a terminal: control characters (ESC and so CSI and OSC sequences: colours, screen
 * clears, clipboard writes, titles, links) are shown as `\x1b`-style escapes instead of being run.
 *
 * @example
 * escapeTerminal('a\x1b]52;c;aGk=\x07b') // 'a\\x1b]52;c;aGk=\\x07b'
 */
export const escapeTerminal = (s: string): string =>
  s.replace(TERMINAL_CONTROL, (c) => {
    const n = c.charCodeAt(0);
    return n > 0xff ? `\\u${n.toString(16).padStart(4, '0')}` : `\\x${n.toString(16).padStart(2, '0')}`;
  });
