import Foundation
import ID3Meter

/// A change of the line-up, for the audit trail: `serve`'s own kind of record (`config_change`),
/// which the library carries as a custom record.
struct ConfigChange {
    /// `add`, `replace`, `delete` or `reload`.
    var action: String
    var channel: String?
    /// An API token's name, `SIGHUP`, or `local` for a tokenless loopback API.
    var by: String
    /// The channel's URL before and after.
    var old: String?
    var new: String?

    var message: String {
        let what = [channel.map { "channel \($0)" }, old.map { "from \($0)" }, new.map { "to \($0)" }].compactMap { $0 }
        return "\(action) \(what.joined(separator: " ")) by \(by)"
    }

    /// The `config_change` record of this change, made at `date`.
    func record(at date: Date) -> MeterRecord {
        var fields = ["action": action, "by": by]
        fields["old_url"] = old
        fields["new_url"] = new
        return MeterRecord(sentAt: date.timeIntervalSince1970, channel: channel,
                           .custom(MeterRecord.Custom(type: "config_change", message: message, fields: fields)))
    }
}
