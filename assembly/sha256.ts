// PLACEHOLDER: owned by the SHA-256 work (scalar + 4-lane SIMD multi-buffer).
export function sha256(ptr: usize, len: usize, out: usize): void {}
export function sha256Init(state: usize): void {}
export function sha256Update(state: usize, ptr: usize, len: usize): void {}
export function sha256Final(state: usize, out: usize): void {}
export function sha256Many(jobs: usize, count: i32, out: usize): void {}
export function pathChain(msgDigests: usize, count: i32, out: usize): void {}
