import nock from 'nock';
import { afterAll, beforeAll } from 'vitest';

/**
 * Call at the top of a file that answers HTTP with nock: requests are intercepted, and real connections refused, for
 * this file only. Both are undone when it ends, so the files that share its worker (files are not isolated from each
 * other) reach the network as it is.
 */
export function useNock(): void {
  beforeAll(() => {
    if (!nock.isActive()) nock.activate();
    nock.disableNetConnect();
  });
  afterAll(() => {
    nock.cleanAll();
    nock.enableNetConnect();
    nock.restore();
  });
}
