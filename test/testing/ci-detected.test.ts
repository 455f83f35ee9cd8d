// CI was told from the `CI` variable only: on Azure Pipelines (TF_BUILD), Jenkins (JENKINS_URL),
// TeamCity (TEAMCITY_VERSION) or AWS CodeBuild, which do not set it, test runs defaulted to
// update mode and called the live API, so a test never recorded passed through an app's fallback.
import { describe, expect, it } from 'vitest';
import { isCI, resolveTestMode } from '../../src/testing/mode.ts';

describe('CI detection', () => {
  it('the CI systems that do not set CI', () => {
    for (const env of [{ TF_BUILD: 'True' }, { JENKINS_URL: 'http://jenkins:8080/' }, { TEAMCITY_VERSION: '2024.1' }, { CODEBUILD_BUILD_ID: 'proj:1' }, { BUILDKITE: 'true' }, { CONTINUOUS_INTEGRATION: 'true' }]) {
      expect(isCI(env), JSON.stringify(env)).toBe(true);
      expect(resolveTestMode({ env })).toEqual({ mode: 'replay', source: 'CI' });
    }
  });

  it('CI itself, and CI=false as a way out on any system', () => {
    expect(isCI({ CI: 'true' })).toBe(true);
    expect(isCI({ CI: '1' })).toBe(true);
    expect(isCI({})).toBe(false);
    expect(isCI({ CI: 'false', TF_BUILD: 'True' })).toBe(false);
    expect(isCI({ CI: '0', JENKINS_URL: 'http://j/' })).toBe(false);
    expect(isCI({ TF_BUILD: '' })).toBe(false);
  });
});
