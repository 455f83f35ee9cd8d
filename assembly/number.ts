// PLACEHOLDER: owned by the numbers work (exact decimal parse + shortest ES formatting).
export function parseNumber(ptr: usize, len: i32): f64 { return 0; }
export function formatNumber(x: f64, out: usize): i32 { return 0; }
export function writeCanonicalNumber(ptr: usize, len: i32, out: usize): i32 { return 0; }
