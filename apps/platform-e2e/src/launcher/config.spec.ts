import { ConfigError } from '@trading/config';
import { loadPlatformConfig } from '@trading/platform';

/** The all-in-one passes some services' own limits on: each is checked here, at start, by name. */
describe('platform configuration', () => {
  it("passes the OMS's open-order cap on, 200 unless set", () => {
    expect(loadPlatformConfig({}).OMS_MAX_OPEN_ORDERS_PER_ACCOUNT).toBe(200);
    expect(loadPlatformConfig({ OMS_MAX_OPEN_ORDERS_PER_ACCOUNT: '5000' }).OMS_MAX_OPEN_ORDERS_PER_ACCOUNT).toBe(5000);
  });

  it.each(['0', '-1', '2.5', 'many'])('refuses OMS_MAX_OPEN_ORDERS_PER_ACCOUNT=%s, naming it', (value) => {
    const load = () => loadPlatformConfig({ OMS_MAX_OPEN_ORDERS_PER_ACCOUNT: value });
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(/OMS_MAX_OPEN_ORDERS_PER_ACCOUNT/);
  });
});
