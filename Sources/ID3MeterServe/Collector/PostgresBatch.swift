import ID3MeterReport

/// A batch's rows on PostgreSQL, each column bound as one array and read back by `unnest`: a
/// statement's thousands of `?`s were parsed, analysed and planned anew for every batch, a third
/// of the database server's time (docs/PERFORMANCE.md). SQLite binds rows (`CollectorSchema`).
extension CollectorSchema {
    /// Inserts the batch's records, in their order, and notes how many were kept in its
    /// `batches` row: one statement, whose one row is that count. A delivery is kept when its
    /// pair key is new to every generation of `delivery_keys` (`RecordDays`): the newest
    /// generation's unique index decides between batches at once, the older ones take no key
    /// while a batch holds `batchLock` (looked into alone: the newest's index is the conflict's,
    /// and with one generation nothing is). The first of a key's copies in the batch is kept.
    static func insertColumns(_ records: [CollectedRecord], batch: String) -> Statement {
        Statement("""
            WITH input AS (
                SELECT t.*, row_number() OVER (PARTITION BY t.channel, t.tag_id ORDER BY t.n) AS nth
                FROM unnest(?::text[], ?::float8[], ?::text[], ?::text[], ?::text[], ?::text[], ?::text[])
                     WITH ORDINALITY AS t(type, sent_at, channel, meter, tag_id, payload, record, n)),
            newest AS (SELECT max(generation) AS generation FROM key_generations),
            fresh AS (
                INSERT INTO delivery_keys (channel, tag_id, generation)
                SELECT i.channel, i.tag_id, newest.generation FROM input i, newest
                WHERE i.type = 'send_id3' AND i.tag_id IS NOT NULL AND i.nth = 1
                  AND NOT EXISTS (SELECT 1 FROM delivery_keys k WHERE k.channel = i.channel AND k.tag_id = i.tag_id
                                                                  AND k.generation < newest.generation)
                ORDER BY i.n
                ON CONFLICT DO NOTHING RETURNING channel, tag_id),
            kept AS (
                INSERT INTO records (batch, type, sent_at, channel, meter, tag_id, payload, record)
                SELECT ?, i.type, i.sent_at, i.channel, i.meter, i.tag_id, i.payload, i.record FROM input i
                WHERE i.type <> 'send_id3' OR i.tag_id IS NULL
                   OR (i.nth = 1 AND EXISTS (SELECT 1 FROM fresh f WHERE f.channel = i.channel AND f.tag_id = i.tag_id))
                ORDER BY i.n RETURNING 1)
            UPDATE batches SET kept = (SELECT count(*) FROM kept) WHERE id = ? RETURNING kept
            """, [.texts(records.map(\.record.type)), .reals(records.map(\.record.sentAt)),
                  .texts(records.map { $0.record.channel ?? "" }), .texts(records.map { $0.record.meter ?? "" }),
                  .texts(records.map(\.record.delivery?.tagID)), .texts(records.map(\.record.delivery?.payload)),
                  .texts(records.map(\.json)), .text(batch), .text(batch)])
    }

    /// Adds `minutes` (the batch's deliveries folded by channel, minute and meter, in that order:
    /// the order every transaction takes the rows in) to the stored minutes, in one statement.
    /// The row's lock is the upsert's: two batches of one minute at once add up.
    static func foldColumns(_ minutes: [(channel: String, meter: String, minute: CoverageMinute)]) -> Statement {
        Statement("""
            INSERT INTO coverage AS c (channel, minute, meter, creditable, info, placeholder, invalid, first_at, last_at, hole_from, hole_to,
                                       info_first, info_last)
            SELECT * FROM unnest(?::text[], ?::int8[], ?::text[], ?::int4[], ?::int4[], ?::int4[], ?::int4[], ?::float8[], ?::float8[],
                                 ?::float8[], ?::float8[], ?::float8[], ?::float8[])
            ON CONFLICT (channel, minute, meter) DO UPDATE SET creditable = c.creditable + excluded.creditable,
                info = c.info + excluded.info, placeholder = c.placeholder + excluded.placeholder, invalid = c.invalid + excluded.invalid,
                first_at = LEAST(c.first_at, excluded.first_at), last_at = GREATEST(c.last_at, excluded.last_at),
                info_first = LEAST(c.info_first, excluded.info_first), info_last = GREATEST(c.info_last, excluded.info_last),
                hole_from = \(mergedHole(end: 1)), hole_to = \(mergedHole(end: 2))
            """, [.texts(minutes.map(\.channel)), .integers(minutes.map(\.minute.minute)), .texts(minutes.map(\.meter)),
                  .integers(minutes.map(\.minute.creditable)), .integers(minutes.map(\.minute.info)),
                  .integers(minutes.map(\.minute.placeholder)), .integers(minutes.map(\.minute.invalid)),
                  .reals(minutes.map(\.minute.first)), .reals(minutes.map(\.minute.last)),
                  .reals(minutes.map(\.minute.hole?.lowerBound)), .reals(minutes.map(\.minute.hole?.upperBound)),
                  .reals(minutes.map(\.minute.infoFirst)), .reals(minutes.map(\.minute.infoLast))])
    }

    /// One end (1: from, 2: to) of the hole of a stored minute `c` and a batch's `excluded`
    /// together: `CoverageMinute`'s hole of their creditable tags all added. A meter's batches
    /// come in time order, so one minute's tags lie after (or, stored at once, before) the
    /// other's, and the hole is either's or the interval between them. Minutes that overlap (a
    /// spool drained beside live posts) are merged by `coverage_hole`.
    private static func mergedHole(end: Int) -> String {
        let threshold = CoverageMinute.gapThreshold
        let (stored, added) = end == 1 ? ("c.hole_from", "excluded.hole_from") : ("c.hole_to", "excluded.hole_to")
        let between = end == 1
            ? "CASE WHEN excluded.first_at - c.last_at >= \(threshold) THEN c.last_at WHEN c.first_at - excluded.last_at >= \(threshold) THEN excluded.last_at END"
            : "CASE WHEN excluded.first_at - c.last_at >= \(threshold) THEN excluded.first_at WHEN c.first_at - excluded.last_at >= \(threshold) THEN c.first_at END"
        return """
            CASE WHEN c.first_at IS NULL OR excluded.first_at IS NULL OR excluded.first_at >= c.last_at OR excluded.last_at <= c.first_at
                THEN COALESCE(\(stored), \(added), \(between))
                ELSE (coverage_hole(c.first_at, c.last_at, c.hole_from, c.hole_to, excluded.first_at, excluded.last_at, excluded.hole_from,
                                    excluded.hole_to, \(threshold)))[\(end)] END
            """
    }

    /// Room left in each page of coverage for a minute's next versions: every batch of a fleet
    /// updates a row per channel, and an update that fits its page changes no index (HOT).
    static let coverageRoom = "ALTER TABLE coverage SET (fillfactor = 70)"

    /// The hole of two minutes' creditable tags together, from their stretches (first to the
    /// hole, the hole to last: every interval inside a stretch is shorter than a gap, and its
    /// ends are tags): the longest interval of `threshold` or more that no stretch covers, as
    /// `{from, to}`, or NULL. At most four stretches, taken in order of their starts.
    static let holeFunction = """
        CREATE FUNCTION coverage_hole(a_first float8, a_last float8, a_from float8, a_to float8,
                                      b_first float8, b_last float8, b_from float8, b_to float8, threshold float8)
        RETURNS float8[] LANGUAGE plpgsql IMMUTABLE AS $$
        DECLARE
            starts float8[] := ARRAY[a_first, a_to, b_first, b_to];
            ends float8[] := ARRAY[COALESCE(a_from, a_last), a_last, COALESCE(b_from, b_last), b_last];
            taken boolean[] := ARRAY[false, false, false, false];
            reach float8;
            best float8[];
            next int;
        BEGIN
            LOOP
                next := NULL;
                FOR i IN 1..4 LOOP
                    IF starts[i] IS NOT NULL AND NOT taken[i] AND (next IS NULL OR starts[i] < starts[next]) THEN next := i; END IF;
                END LOOP;
                EXIT WHEN next IS NULL;
                taken[next] := true;
                IF reach IS NOT NULL AND starts[next] - reach >= threshold AND (best IS NULL OR starts[next] - reach > best[2] - best[1]) THEN
                    best := ARRAY[reach, starts[next]];
                END IF;
                reach := GREATEST(reach, ends[next]);
            END LOOP;
            RETURN best;
        END $$
        """
}
