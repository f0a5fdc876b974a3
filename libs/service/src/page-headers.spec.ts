import { PAGE_POLICY, renderPolicy, widenedPolicy } from './page-headers';

describe('page headers', () => {
  it('widen a directive by adding sources to the page policy’s own, once each, leaving the page policy as it was', () => {
    const before = renderPolicy(PAGE_POLICY);
    const wider = widenedPolicy({ 'img-src': ['data:', "'self'"], 'font-src': ['data:'] });
    expect(wider['img-src']).toEqual(["'self'", 'data:']);
    expect(wider['font-src']).toEqual(['data:']);
    expect(wider['script-src']).toEqual(["'self'"]);
    expect(renderPolicy(PAGE_POLICY)).toBe(before);
    expect(renderPolicy(wider)).toContain("img-src 'self' data:; ");
  });
});
