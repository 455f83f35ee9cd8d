// A Bedrock model id may be an ARN (a foundation model, or an inference profile named after the
// model); `tapedeck stats` prices it as the model it names, as it prices the bare id.
import { describe, expect, it } from 'vitest';
import { DEFAULT_PRICES, priceOf } from '../../src/drift/prices.ts';

describe('Bedrock ARNs are priced as the model they name', () => {
  const haiku = DEFAULT_PRICES['claude-3-5-haiku'];
  it.each([
    ['us.anthropic.claude-3-5-haiku-20241022-v1:0', haiku],
    ['arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-3-5-haiku-20241022-v1:0', haiku],
    ['arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-3-5-haiku-20241022-v1:0', haiku],
    ['arn:aws-us-gov:bedrock:us-gov-west-1:123456789012:inference-profile/us-gov.anthropic.claude-3-5-haiku-20241022-v1:0', haiku],
    ['us.amazon.nova-lite-v1:0', DEFAULT_PRICES['amazon.nova-lite']],
    ['arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.amazon.nova-lite-v1:0', DEFAULT_PRICES['amazon.nova-lite']],
  ])('%s', (model, price) => {
    expect(price).toBeDefined();
    expect(priceOf(model, DEFAULT_PRICES)).toEqual(price);
  });

  it('an ARN of a model the table does not know stays unpriced', () => {
    expect(priceOf('arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1b2c3d4e5f6', DEFAULT_PRICES)).toBeUndefined();
  });
});

describe('tapedeck stats table with a Bedrock ARN', () => {
  it('shows the ARN without its region and account, priced', async () => {
    const { renderStats } = await import('../../src/drift/render-stats.ts');
    const arn = 'arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-3-5-haiku-20241022-v1:0';
    const row = { calls: 1, errors: 0, tokensIn: 10, tokensOut: 5, withoutUsage: 0, cost: 0.001, recordedMs: 100 };
    const out = renderStats({ tapes: 1, rows: [{ provider: 'bedrock', model: arn, ...row }], total: row, unpriced: [] }, {});
    expect(out).toContain('arn:…:inference-profile/us.anthropic.claude-3-5-haiku-20241022-v1:0');
    expect(out).not.toContain('123456789012');
  });
});
