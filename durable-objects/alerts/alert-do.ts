/**
 * The factory's one AlertDO (docs/supervisor.md#the-operator-channel): every project's supervisor and the
 * cron's watchdog report their alerts here, so a cause seen from several projects (a runner serving them all)
 * is one alert, and each alert is told to the operator's channels once when it opens and once when it
 * resolves, from this object's outbox. Its alarm is that outbox's: it wakes only while a message waits.
 */
import { DurableObject } from "cloudflare:workers";
import { ALERT_CHANNELS, configuredChannels } from "../../src/alert-stub.ts";
import type { AlertObject, AlertsView, Retire } from "../../src/contracts/alert-object.ts";
import type { AlertMessage, SourceReport } from "../../src/domain/alerts.ts";
import type { Env } from "../../src/env.ts";
import { armAlarm, deliverSoon, outboxAlarm } from "../shared/alarm.ts";
import { deliverInOrder, Outbox } from "../shared/outbox.ts";
import { AlertBook } from "./alert-book.ts";
import { sendAlert } from "./channels.ts";

export class AlertDO extends DurableObject<Env> implements AlertObject {
  private readonly outbox: Outbox;
  private readonly book: AlertBook;
  private delivering: Promise<void> | null = null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.outbox = new Outbox(ctx.storage.sql);
    this.book = new AlertBook(ctx.storage.sql, this.outbox);
  }

  async report(reports: readonly SourceReport[], retire?: Retire) {
    const channels = configuredChannels(this.env);
    const now = Date.now();
    const changes = this.ctx.storage.transactionSync(() =>
      this.book.report([...reports, ...(retire ? this.book.retired(retire) : [])], channels, now),
    );
    if (changes.opened.length + changes.resolved.length > 0) {
      await deliverSoon(
        this.ctx,
        (floor) => this.arm(floor),
        () => this.deliver(),
      );
    }
    return changes;
  }

  view(): AlertsView {
    const stats = new Map(this.outbox.stats().map((s) => [s.channel, s]));
    const channels = configuredChannels(this.env).map((channel) => ({
      channel,
      waiting: stats.get(channel)?.pending ?? 0,
      lastError: stats.get(channel)?.lastError ?? null,
    }));
    return { open: this.book.open(), resolved: this.book.resolved(), channels };
  }

  async drain() {
    await this.deliver(Number.POSITIVE_INFINITY);
    await this.arm();
  }

  override async alarm() {
    await this.deliver();
    await this.arm();
  }

  /** One delivery at a time (a message is sent once): a caller during one waits for it, then runs its own. */
  private async deliver(horizon?: number): Promise<void> {
    while (this.delivering) await this.delivering;
    this.delivering = this.send(horizon).finally(() => {
      this.delivering = null;
    });
    return this.delivering;
  }

  /** Each channel in order on its own: a webhook that is down holds back no email. */
  private async send(horizon?: number): Promise<void> {
    await Promise.all(
      ALERT_CHANNELS.map((channel) =>
        deliverInOrder(
          this.ctx.storage,
          this.outbox,
          [channel],
          1,
          async ([row]) => {
            if (row) await sendAlert(this.env, channel, JSON.parse(row.payload) as AlertMessage);
          },
          horizon,
        ),
      ),
    );
  }

  private arm(floor?: number): Promise<void> {
    return armAlarm(this.ctx.storage, [outboxAlarm(this.outbox.nextOfEach(ALERT_CHANNELS), floor)]);
  }
}
