import PushBridgeCore
import PushBridgeJSON
/// The record a sent message leaves behind, so that a repeated send returns the same decisions
/// byte for byte and changes no counter (Specification §10).
///
/// A compact binary form, because a group send writes one for every receiver in its transaction.
/// `PBR3` (written since 0.12): the magic, the number of decisions, then per decision its receiver
/// and one of
/// - `0` + the reason's code (``reasons``);
/// - `1` + the payload as its difference from the previous payload written this way (the length of
///   the common prefix, of the common suffix, and the bytes between): payloads written for one
///   receiver alone (shortened) or the same for every receiver;
/// - `2` + a template's number (a template's bytes and the places of the badge digits and the
///   receiver's id follow its first use), the badge written in (when the template has a place for
///   it) and the receiver's id written in (`0`: the decision's own receiver, else its length + 1 and
///   its bytes) — a class's payload shared by its receivers, written once;
///
/// then, for `1` and `2`, the badge counter and the deliveries: each its token (a lower-case hex
/// token as its bytes: the length × 2 + 1, then the bytes; any other as its length × 2, then the
/// text), its certificate (a number; a certificate's fields follow its first use), its binding
/// time and `0` for the standard headers or `1` and their names and values.
/// Counts and lengths are LEB128 varints, signed integers zigzag varints.
///
/// `PBR4` (since 0.14) is the record of a send to a kept group, whose receivers' names and devices
/// are a stored roll (`SentMessageTable.storeRoll(_:usedAt:encoded:)`): the magic, the roll's
/// id, the row left out + 1 (`0`: none), the number of decisions, then per decision what `PBR3`
/// writes without its receiver (decision `i` is the roll's row `i`, or `i + 1` from the row left
/// out on), the deliveries written as `0` for the row's own devices with the standard headers, or
/// their count + 1 and each as in `PBR3`. The roll (`PBL1`): the magic, the number of rows, then
/// per row its name, its number of devices and each device as in `PBR3` (its own certificate numbers).
///
/// `PBR2` (0.10–0.11: every
/// payload as a difference, tokens as text, reasons as words) and `PBR1` (0.9: fixed widths,
/// every payload and header in full) records are still read.
package enum SentMessageRecord {
    static let magic: [UInt8] = Array("PBR3".utf8)
    static let magicVersion4: [UInt8] = Array("PBR4".utf8)
    static let rollMagic: [UInt8] = Array("PBL1".utf8)
    static let magicVersion2: [UInt8] = Array("PBR2".utf8)
    static let magicVersion1: [UInt8] = Array("PBR1".utf8)
    /// A suppression reason's code is its place here (new reasons go at the end).
    static let reasons: [SuppressionReason] = [
        .online, .noDevice, .ignored, .emptyContent, .doNotDisturb, .muted, .notMentioned, .payloadTooLarge, .command, .largeGroup,
    ]

    /// A stored roll that a record's decisions are the rows of.
    package struct RollReference {
        /// The stored roll's id.
        package var id: Int64
        /// Every row of the roll, the one left out too.
        package var rows: [UserState]
        /// The row left out (the sender), if any.
        package var skipped: Int?

        /// - Parameters:
        ///   - id: the stored roll's id.
        ///   - rows: every row of the roll, the one left out too.
        ///   - skipped: the row left out (the sender), if any.
        package init(id: Int64, rows: [UserState], skipped: Int?) {
            self.id = id
            self.rows = rows
            self.skipped = skipped
        }
    }

    /// The `PBL1` bytes of a roll's rows: each row's name and devices.
    package static func encodeRoll(_ rows: [UserState]) -> [UInt8] {
        var out = RecordWriter()
        out.bytes.reserveCapacity(16 + rows.count * 56)
        out.bytes += rollMagic
        out.varint(UInt64(rows.count))
        var certificates = Numbering<Certificate>()
        rows.withUnsafeBufferPointer { rows in
            for row in rows.indices {
                out.string(rows[row].user)
                out.varint(UInt64(rows[row].devices.count))
                rows[row].devices.withUnsafeBufferPointer { devices in
                    for i in devices.indices { out.device(devices[i], certificates: &certificates) }
                }
            }
        }
        return out.bytes
    }

    /// A record of decisions: `PBR4`, referring to `roll` for the receivers' names and devices,
    /// when given and every decision's receiver is its row's; else `PBR3`.
    package static func encode(_ decisions: [ReceiverDecision], roll: RollReference? = nil) -> [UInt8] {
        if let roll, decisions.count == roll.rows.count - (roll.skipped == nil ? 0 : 1) {
            var writer = DecisionWriter(version4: true, capacity: decisions.count)
            let skipped = roll.skipped ?? Int.max
            for index in decisions.indices {
                writer.append(decisions[index].fanOut, receiver: decisions[index].receiver, row: roll.rows[index < skipped ? index : index + 1])
            }
            if writer.matchesRows { return writer.record(count: decisions.count, roll: (roll.id, roll.skipped)) }
        }
        var writer = DecisionWriter(version4: false, capacity: decisions.count)
        for index in decisions.indices { writer.append(decisions[index].fanOut, receiver: decisions[index].receiver, row: nil) }
        return writer.record(count: decisions.count, roll: nil)
    }


    /// Whether two device lists are equal: at once when they share their storage (a decision's
    /// devices are its row's), else compared.
    static func same(_ a: [Device], _ b: [Device]) -> Bool {
        let shared = a.withUnsafeBufferPointer { a in b.withUnsafeBufferPointer { b in a.baseAddress == b.baseAddress && a.count == b.count } }
        return shared || a == b
    }
}
