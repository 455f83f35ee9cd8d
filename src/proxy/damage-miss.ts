/**
 * The deck's miss on a damaged tape (src/store/damage-miss.ts). A module of its own so that
 * browser builds take damage-miss.browser.ts: a page's miss stays as it is.
 */
export { missOnDamagedTape } from '../store/damage-miss.ts';
