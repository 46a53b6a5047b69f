/// Where one `serve` instance stands in a deployment that meters every channel `copies` times
/// (a main and a backup, or K): the share of the line-up it meters and which copy of that share
/// it is. Copies of a shard meter the same channels independently; their records carry the same
/// `tag_id` for the same tag, and a collector keeps one (docs/COLLECTOR.md).
public struct Placement: Sendable, Equatable, CustomStringConvertible {
    /// `nil`: the whole line-up.
    public var shard: Shard?
    /// From 0; `nil` when the instance was not told (`--shard I/N` names no copy).
    public var copy: Int?
    /// Instances metering each channel.
    public var copies: Int

    public static let maximumCopies = 8
    /// One instance metering every channel.
    public static let wholeLineup = Placement(shard: nil)!

    public init?(shard: Shard?, copy: Int? = nil, copies: Int = 1) {
        guard (1...Self.maximumCopies).contains(copies), copy.map({ (0..<copies).contains($0) }) ?? true else { return nil }
        self.shard = shard
        self.copy = copy
        self.copies = copies
    }

    /// The pod of a StatefulSet of `shards` × `copies` replicas, by the ordinal at the end of
    /// its name: ordinals 0..<shards are copy 0 of each shard, the next `shards` copy 1, and so
    /// on. Going from one copy to two then only adds pods, and moves no channel.
    public init?(ordinalOf name: String, shards: Int, copies: Int) {
        guard let ordinal = Shard.ordinal(of: name), shards >= 1, ordinal < shards * copies,
              let shard = Shard(index: ordinal % shards, count: shards) else { return nil }
        self.init(shard: shard, copy: ordinal / shards, copies: copies)
    }

    /// `copy 2 of 2`, `one of 2 copies`; `nil` for a single copy.
    public var copyDescription: String? {
        guard copies > 1 else { return nil }
        return copy.map { "copy \($0 + 1) of \(copies)" } ?? "one of \(copies) copies"
    }

    /// `shard 1/3, copy 2 of 2`; `the whole line-up` when not sharded.
    public var description: String {
        ([shard.map { "shard \($0)" } ?? "the whole line-up"] + [copyDescription].compactMap { $0 }).joined(separator: ", ")
    }
}
