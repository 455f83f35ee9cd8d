// The option and argument types of public functions, importable by name from the entry that
// exports the function (a helper that wraps addRecordings or MemoryBackend must be able to name
// what it passes on). Checked by types.test.ts: each import must resolve.
import type { Sha256Input } from '../../src/index.ts';
import type { AddOptions, AwsCredentials } from '../../src/proxy/index.ts';
import type { MemoryBackendOptions } from '../../src/store/index.ts';
import type { TestServeOptions } from '../../src/testing/index.ts';
import type { addRecordings, createHandler } from '../../src/proxy/index.ts';
import type { MemoryBackend } from '../../src/store/index.ts';
import type { sha256 } from '../../src/index.ts';
import type { TestTape } from '../../src/testing/index.ts';
// The types that the Redis store's connect option, detectProvider's endpoint, a miss's closest
// recordings and httpRecords' origin filing take: each named by the entry of its function.
import type { ConnectOptions, OriginFiling } from '../../src/store/index.ts';
import type { httpRecords, RedisBackend } from '../../src/store/index.ts';
import type { RouteRequest } from '../../src/index.ts';
import type { detectProvider } from '../../src/index.ts';
import type { MissDetails, Near } from '../../src/testing/index.ts';

// Each is the type the function takes, not a look-alike.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
export const checks: [
  Same<AddOptions, Parameters<typeof addRecordings>[0]>,
  Same<AwsCredentials | false, NonNullable<Parameters<typeof createHandler>[0]['awsCredentials']>>,
  Same<MemoryBackendOptions, NonNullable<ConstructorParameters<typeof MemoryBackend>[0]>>,
  Same<TestServeOptions, NonNullable<Parameters<TestTape['serve']>[0]>>,
  Same<Sha256Input, Parameters<typeof sha256>[0]>,
  Same<ConnectOptions, NonNullable<NonNullable<ConstructorParameters<typeof RedisBackend>[1]>['connect']>>,
  Same<RouteRequest, NonNullable<Parameters<typeof detectProvider>[1]>>,
  Same<Near, NonNullable<MissDetails['closest']>[number]>,
  Same<OriginFiling, NonNullable<Parameters<typeof httpRecords>[1]>>,
] = [true, true, true, true, true, true, true, true, true];
