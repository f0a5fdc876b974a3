import { Oms1732230000003 } from './1732230000003-oms';
import { Market1732230000013 } from './1732230000013-market';
import { OrderManagement1732230000021 } from './1732230000021-order-management';
import { TraceContext1732230000031 } from './1732230000031-trace-context';
import { OutboxStreamEntry1732230000032 } from './1732230000032-outbox-stream-entry';
import { MarketData1732230000041 } from './1732230000041-market-data';
import { OrderReplace1732230000050 } from './1732230000050-order-replace';
import { TrailingStop1732230000051 } from './1732230000051-trailing-stop';
import { OrderClasses1732230000052 } from './1732230000052-order-classes';
import { OpenOrderCount1732230000060 } from './1732230000060-open-order-count';
import { EngineIndexes1732230000070 } from './1732230000070-engine-indexes';
import { InstrumentsChanged1732230000080 } from './1732230000080-instruments-changed';
import { OrdersUnusedIndexes1732230000091 } from './1732230000091-orders-unused-indexes';
import { MarketBars1732230000100 } from './1732230000100-market-bars';
import { MarketBarVwap1732230000110 } from './1732230000110-market-bar-vwap';

export { INSTRUMENTS_CHANGED_CHANNEL } from './1732230000080-instruments-changed';
export { checkOpenOrderCapSetting, OPEN_ORDER_CAP_SETTING, OPEN_ORDER_CAP_SQLSTATE } from './1732230000060-open-order-count';

/** The OMS database's migrations, oldest first. */
export const omsMigrations = [
  Oms1732230000003,
  Market1732230000013,
  OrderManagement1732230000021,
  TraceContext1732230000031,
  OutboxStreamEntry1732230000032,
  MarketData1732230000041,
  OrderReplace1732230000050,
  TrailingStop1732230000051,
  OrderClasses1732230000052,
  OpenOrderCount1732230000060,
  EngineIndexes1732230000070,
  InstrumentsChanged1732230000080,
  OrdersUnusedIndexes1732230000091,
  MarketBars1732230000100,
  MarketBarVwap1732230000110,
];
