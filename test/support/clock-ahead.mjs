// Preloaded (`NODE_OPTIONS=--import …`) into a child process whose clock must run ahead of the
// machine's by CLOCK_AHEAD_MS, as a laptop's may of a server's: Date.now() and `new Date()` only.
const aheadMs = Number(process.env.CLOCK_AHEAD_MS ?? 0);
const RealDate = Date;
class AheadDate extends RealDate {
  constructor(...args) {
    super(...(args.length === 0 ? [RealDate.now() + aheadMs] : args));
  }
  static now() {
    return RealDate.now() + aheadMs;
  }
}
globalThis.Date = AheadDate;
