import { randomBytes } from "node:crypto";
import { ChatLeaseEndedError } from "../errors.js";
import type { EngineEvent } from "../events.js";
import type {
  ChatActivity,
  ChatKey,
  ChatLease,
  LeasePurpose,
  NumberedEvent,
  RunningTurns,
} from "../server/running-turns.js";
import { fairEmbedded } from "./fair-embedded.js";
import { checkSchema } from "./migrate.js";
import { isEmbedded, listenTo, type NotifyChannel, type SqlDatabase } from "./sql.js";

/** Options of {@link createPostgresRunningTurns}. */
export interface PostgresRunningTurnsOptions {
  /** The same database the chats are in (a `pg` `Pool` or PGlite), migrated. */
  readonly db: SqlDatabase;
  /**
   * How long a lease lasts unless renewed; it is renewed every third of it while held. An instance that dies
   * (SIGKILL, a lost machine) leaves the chat to the others after at most this long. Default 10 s.
   */
  readonly leaseMs?: number;
  /** How often followers and waiters look again when no NOTIFY came (a dropped connection). Default 1 s. */
  readonly pollMs?: number;
  /**
   * How long an ended turn's events stay once the next turn starts, for followers still reading them (a slow
   * client, an instance under load): a follower never loses its own turn's events to the next turn. Default 60 s.
   */
  readonly keepEndedMs?: number;
  /** A name for this instance in `conch_leases.holder`. Default host-pid-random. */
  readonly holder?: string;
}

/** {@link RunningTurns} shared by every instance on one database; `close()` stops its renewals and listener. */
export interface PostgresRunningTurns extends RunningTurns {
  close(): Promise<void>;
}

const eventsChannel: NotifyChannel = "conch_turn_events";
const leasesChannel: NotifyChannel = "conch_leases";
const abortsChannel: NotifyChannel = "conch_turn_aborts";

type Wake = () => void;

/**
 * The server's per-chat lease and running-turn events in Postgres, so that several `pnpm serve` instances (or
 * handlers) share chats: a lease row per chat with an expiry its holder renews (a dead holder's lease simply
 * expires), the turn's events as rows with ids from the chat's counter (they increase across instances and
 * restarts), and LISTEN/NOTIFY so that a follower on another instance hears new events, releases and abort
 * requests at once; each of them is also polled, so a lost notification only delays.
 */
export function createPostgresRunningTurns(options: PostgresRunningTurnsOptions): PostgresRunningTurns {
  const given = options.db;
  // On PGlite, statements take their turn in one line per database (fair-embedded.ts).
  const db = isEmbedded(given) ? fairEmbedded(given) : given;
  const leaseMs = options.leaseMs ?? 10_000;
  const pollMs = options.pollMs ?? 1000;
  const keepEndedMs = options.keepEndedMs ?? 60_000;
  const holder = options.holder ?? `${process.pid}-${randomBytes(4).toString("hex")}`;
  const wakers = new Map<string, Set<Wake>>();
  /** Followers in this instance, by chat: the events this instance stores reach them without a read. */
  const localFollowers = new Map<string, Set<(numbered: NumberedEvent) => void>>();
  const leases = new Map<string, { readonly turnId: string; readonly controller: AbortController }>();
  const renewals = new Set<ReturnType<typeof setInterval>>();
  let listening: Promise<Array<() => Promise<void>>> | undefined;

  const name = (key: ChatKey) => JSON.stringify([key.userId, key.chatId]);
  const wake = (keyName: string) => {
    for (const callback of wakers.get(keyName) ?? []) callback();
  };
  const onNotify = (payload: string) => wake(payload);
  /** Leases being taken here, by turn id: their row is in, their abort can come before `hold` has them. */
  const acquiring = new Map<string, AbortController>();
  const onAbortNotify = (payload: string) => {
    const [keyName, turnId] = JSON.parse(payload) as [string, string];
    const lease = leases.get(keyName);
    const controller = lease?.turnId === turnId ? lease.controller : acquiring.get(turnId);
    controller?.abort(new DOMException("The turn was stopped", "AbortError"));
  };

  function listen(): Promise<unknown> {
    listening ??= Promise.all([
      listenTo(db, eventsChannel, onNotify),
      listenTo(db, leasesChannel, onNotify),
      listenTo(db, abortsChannel, onAbortNotify),
    ]);
    return listening;
  }

  /** Resolves on the next event, release or poll tick for the chat, or when `signal` aborts. */
  function nextWake(keyName: string, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const set = wakers.get(keyName) ?? new Set<Wake>();
      wakers.set(keyName, set);
      const done = () => {
        clearTimeout(timer);
        set.delete(done);
        if (set.size === 0) wakers.delete(keyName);
        signal?.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, pollMs);
      set.add(done);
      signal?.addEventListener("abort", done, { once: true });
    });
  }

  async function tryAcquire(key: ChatKey, purpose: LeasePurpose): Promise<ChatLease | null> {
    await checkSchema(given);
    const turnId = randomBytes(9).toString("base64url");
    // An abort asked for between the lease row and `hold` (the statements between wait their turn under load)
    // stops the turn from its start, instead of waiting for the next renewal to read it.
    const controller = new AbortController();
    acquiring.set(turnId, controller);
    try {
      return await takeLease(key, purpose, turnId, controller);
    } finally {
      acquiring.delete(turnId);
    }
  }

  async function takeLease(
    key: ChatKey,
    purpose: LeasePurpose,
    turnId: string,
    controller: AbortController,
  ): Promise<ChatLease | null> {
    // A lease row that expired belongs to nobody: taking it over is how a dead instance's chat comes back. A fold
    // ahead's gives way to any other lease: its holder learns it at its next event or renewal.
    // The chat's row may go between the two statements (a lease released on a chat nobody wrote drops it): then
    // there is no lease to refuse, and the row is made again.
    let rows: Record<string, unknown>[] = [];
    for (let attempt = 0; attempt < 3 && rows.length === 0; attempt++) {
      await db.query("insert into conch_chats (user_id, chat_id) values ($1, $2) on conflict do nothing", [
        key.userId,
        key.chatId,
      ]);
      ({ rows } = await leaseRow(key, purpose, turnId));
      if (rows.length === 0 && (await isHeld(key))) return null;
    }
    if (rows.length === 0) return null;
    await listen();
    if (purpose === "turn") {
      // Earlier turns' events go once the next turn starts, but not while a follower may still be reading them;
      // a turn whose holder died (its lease taken over) never ended, and its events go at once.
      await db.query(
        `delete from conch_turn_events where user_id = $1 and chat_id = $2 and turn_id <> $3
         and ($5 or stored_at < now() - $4 * interval '1 millisecond')`,
        [key.userId, key.chatId, turnId, keepEndedMs, rows[0]?.taken_over === true],
      );
    }
    // "0" rather than null for a chat's first turn: null is "the latest turn", which may already be the next one.
    return hold(key, purpose, turnId, String(rows[0]?.start_cursor ?? 0), controller);
  }

  function leaseRow(key: ChatKey, purpose: LeasePurpose, turnId: string) {
    return db.query(
      `insert into conch_leases (user_id, chat_id, turn_id, holder, expires_at, purpose, start_cursor)
       select $1, $2, $3, $4, now() + $5 * interval '1 millisecond', $6, c.next_event_id - 1
       from conch_chats c where c.user_id = $1 and c.chat_id = $2
       on conflict (user_id, chat_id) do update set turn_id = excluded.turn_id, holder = excluded.holder,
         expires_at = excluded.expires_at, purpose = excluded.purpose, start_cursor = excluded.start_cursor,
         turn_seq = null, abort_requested = false
       where conch_leases.expires_at < now() or (conch_leases.purpose = 'fold' and excluded.purpose <> 'fold')
       returning start_cursor, xmax <> 0 as taken_over`,
      [key.userId, key.chatId, turnId, holder, leaseMs, purpose],
    );
  }

  function hold(
    key: ChatKey,
    purpose: LeasePurpose,
    turnId: string,
    startCursor: string | null,
    controller: AbortController,
  ): ChatLease {
    const keyName = name(key);
    leases.set(keyName, { turnId, controller });
    const lose = (why: string) => {
      if (!controller.signal.aborted) controller.abort(new DOMException(why, "AbortError"));
    };
    const renewal = setInterval(() => {
      db.query(
        `update conch_leases set expires_at = now() + $4 * interval '1 millisecond'
         where user_id = $1 and chat_id = $2 and turn_id = $3 returning abort_requested`,
        [key.userId, key.chatId, turnId, leaseMs],
      ).then(
        ({ rows }) => {
          if (rows.length === 0) lose("The chat's lease was lost: it expired and another instance took it");
          else if (rows[0]?.abort_requested === true) lose("The turn was stopped");
        },
        () => undefined, // the next renewal tries again; the lease lasts three renewals
      );
    }, leaseMs / 3);
    renewals.add(renewal);
    let released = false;
    let chain: Promise<unknown> = Promise.resolve();

    const store = async (event: EngineEvent): Promise<NumberedEvent> => {
      if (released) throw new ChatLeaseEndedError(key.chatId, "released");
      // One statement: the id from the chat's counter, the row, the NOTIFY, and only while the lease is ours.
      const { rows } = await db.query(
        `with lease as (
           update conch_leases set turn_seq = coalesce($5, turn_seq)
           where user_id = $1 and chat_id = $2 and turn_id = $3 returning 1
         ), next as (
           update conch_chats set next_event_id = next_event_id + 1
           where user_id = $1 and chat_id = $2 and exists (select 1 from lease) returning next_event_id - 1 as id
         ), stored as (
           insert into conch_turn_events (user_id, chat_id, event_id, turn_id, event)
           select $1, $2, id, $3, $4 from next returning event_id
         )
         select event_id::text as id, pg_notify($6, $7) from stored`,
        [
          key.userId,
          key.chatId,
          turnId,
          JSON.stringify(event),
          event.type === "turn-start" ? event.message.seq : null,
          eventsChannel,
          keyName,
        ],
      );
      const id = rows[0]?.id;
      if (typeof id !== "string") {
        lose("The chat's lease was lost: it expired and another instance took it");
        throw new ChatLeaseEndedError(key.chatId, "lost");
      }
      const numbered = { id, event };
      for (const follower of localFollowers.get(keyName) ?? []) follower(numbered);
      wake(keyName);
      return numbered;
    };

    return {
      purpose,
      startCursor,
      abortSignal: controller.signal,
      record(event) {
        // In call order, whether or not the caller waits for each.
        const stored = chain.then(() => store(event));
        chain = stored.catch(() => undefined);
        return stored;
      },
      async release() {
        if (released) return;
        await chain;
        released = true;
        clearInterval(renewal);
        renewals.delete(renewal);
        if (leases.get(keyName)?.turnId === turnId) leases.delete(keyName);
        // A chat nobody wrote (no message, no transcript, no event ever numbered: a turn refused for its seq, a
        // fold with nothing to fold, a delete of an unknown id) keeps no row; made again as it was, should it be.
        await db.query(
          `with gone as (delete from conch_leases where user_id = $1 and chat_id = $2 and turn_id = $3 returning 1),
           ghost as (
             delete from conch_chats c where c.user_id = $1 and c.chat_id = $2 and c.next_event_id = 1
               and exists (select 1 from gone)
               and not exists (select 1 from conch_messages m where m.user_id = $1 and m.chat_id = $2)
               and not exists (select 1 from conch_transcripts t where t.user_id = $1 and t.chat_id = $2)
             returning 1)
           select pg_notify($4, $5) from gone`,
          [key.userId, key.chatId, turnId, leasesChannel, keyName],
        );
        wake(keyName);
      },
    };
  }

  /** Just before the latest turn's first event: a follower from no cursor sees that turn only, as in-process. */
  async function latestTurnStart(key: ChatKey): Promise<string> {
    const { rows } = await db.query(
      `select coalesce(min(event_id) - 1, 0)::text as start from conch_turn_events
       where user_id = $1 and chat_id = $2 and turn_id = (
         select turn_id from conch_turn_events where user_id = $1 and chat_id = $2 order by event_id desc limit 1)`,
      [key.userId, key.chatId],
    );
    return String(rows[0]?.start ?? "0");
  }

  async function isHeld(key: ChatKey): Promise<boolean> {
    const { rows } = await db.query(
      "select 1 from conch_leases where user_id = $1 and chat_id = $2 and expires_at >= now()",
      [key.userId, key.chatId],
    );
    return rows.length > 0;
  }

  async function waitUntil<T>(key: ChatKey, signal: AbortSignal | undefined, attempt: () => Promise<T | null>) {
    await listen();
    for (;;) {
      if (signal?.aborted) throw signal.reason;
      const value = await attempt();
      if (value !== null) return value;
      await nextWake(name(key), signal);
    }
  }

  return {
    tryAcquire,

    acquire(key, purpose, signal) {
      return waitUntil(key, signal, () => tryAcquire(key, purpose));
    },

    async activity(key): Promise<ChatActivity> {
      await checkSchema(given);
      const { rows } = await db.query(
        `select c.next_event_id - 1 as latest, l.purpose, l.start_cursor, l.turn_seq
         from conch_chats c
         left join conch_leases l on l.user_id = c.user_id and l.chat_id = c.chat_id and l.expires_at >= now()
         where c.user_id = $1 and c.chat_id = $2`,
        [key.userId, key.chatId],
      );
      const row = rows[0];
      if (row?.purpose === "turn") {
        const start = Number(row.start_cursor ?? 0);
        const turnSeq = row.turn_seq === null || row.turn_seq === undefined ? null : Number(row.turn_seq);
        return { running: true, cursor: String(start), turnSeq };
      }
      const latest = Number(row?.latest ?? 0);
      return { running: false, cursor: latest > 0 ? String(latest) : null, turnSeq: null };
    },

    follow(key, after, signal) {
      return follow(key, after, signal);
    },

    async requestAbort(key) {
      await checkSchema(given);
      const { rows } = await db.query(
        `update conch_leases set abort_requested = true
         where user_id = $1 and chat_id = $2 and expires_at >= now() and purpose <> 'delete'
         returning turn_id, pg_notify($3, json_build_array($4::text, turn_id)::text)`,
        [key.userId, key.chatId, abortsChannel, name(key)],
      );
      // This instance may hold it: the NOTIFY reaches its own listener too, but not before this resolves.
      const turnId = rows[0]?.turn_id;
      if (typeof turnId === "string") onAbortNotify(JSON.stringify([name(key), turnId]));
      return rows.length > 0;
    },

    async settled(key, signal) {
      await waitUntil(key, signal, async () => ((await isHeld(key)) ? null : true));
    },

    async forget(key) {
      await db.query("delete from conch_turn_events where user_id = $1 and chat_id = $2", [key.userId, key.chatId]);
    },

    async close() {
      for (const renewal of renewals) clearInterval(renewal);
      renewals.clear();
      const stops = await (listening ?? Promise.resolve([]));
      listening = undefined;
      await Promise.all(stops.map((stop) => stop()));
    },
  };

  async function* follow(key: ChatKey, after: string | null, signal: AbortSignal): AsyncGenerator<NumberedEvent> {
    await checkSchema(given);
    await listen();
    const keyName = name(key);
    // What this instance stores for the chat comes here as it is stored (the fan-out without a read per event);
    // the database is read for the rest: the catch-up, and events another instance stored.
    const pushed: NumberedEvent[] = [];
    const onStored = (numbered: NumberedEvent) => pushed.push(numbered);
    const followers = localFollowers.get(keyName) ?? new Set();
    localFollowers.set(keyName, followers);
    followers.add(onStored);
    try {
      let last = after !== null && /^\d+$/.test(after) ? after : await latestTurnStart(key);
      let read = true;
      while (!signal.aborted) {
        // Ids of a chat go up by one: an event pushed right after the last one given needs no read.
        while (pushed.length > 0 && BigInt(pushed[0]!.id) <= BigInt(last)) pushed.shift();
        const next = pushed[0];
        if (!read && next && BigInt(next.id) === BigInt(last) + 1n) {
          pushed.shift();
          last = next.id;
          yield next;
          continue;
        }
        // Asked for before reading, so an event stored in between wakes the next wait instead of being missed.
        const woken = nextWake(keyName, signal);
        if (read || next) {
          const { rows } = await db.query(
            `select event_id::text as id, event from conch_turn_events
             where user_id = $1 and chat_id = $2 and event_id > $3::bigint order by event_id`,
            [key.userId, key.chatId, last],
          );
          read = false;
          for (const row of rows) {
            if (signal.aborted) return;
            last = String(row.id);
            yield { id: last, event: JSON.parse(String(row.event)) as EngineEvent };
          }
          if (rows.length > 0) continue;
        }
        await woken;
        // A wake with nothing pushed came from elsewhere (another instance's NOTIFY, a release, the poll): read.
        if (pushed.length === 0) read = true;
      }
    } finally {
      followers.delete(onStored);
      if (followers.size === 0 && localFollowers.get(keyName) === followers) localFollowers.delete(keyName);
    }
  }
}
