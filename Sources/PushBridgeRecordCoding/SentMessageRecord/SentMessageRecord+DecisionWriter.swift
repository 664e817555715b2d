import PushBridgeCore
import PushBridgeJSON

extension SentMessageRecord {
    /// Writes a record's decisions one by one, as they are made: a group send writes each
    /// receiver's while its row is at hand, rather than reading all the rows again afterwards.
    package struct DecisionWriter {
        /// `PBR4` (decisions are a roll's rows, written without their receivers) or `PBR3`.
        package let version4: Bool
        /// Whether every decision appended to a `PBR4` record was its row's receiver's: the record
        /// is right only then (else nothing more is written, and the record is to be `PBR3`).
        package private(set) var matchesRows = true
        private var out = RecordWriter()
        private var previous: [UInt8] = []
        private var templates = Numbering<ObjectIdentifier>()
        private var certificates = Numbering<Certificate>()

        /// Whether a request whose devices are a kept row's (`Targets.row`) refers to the very row it
        /// is appended with: a send writing its record as it decides its kept rows.
        let rowTargetsAreRows: Bool

        /// - Parameters:
        ///   - version4: whether the decisions are a roll's rows, in order (``append(_:receiver:row:)`` gives each row).
        ///   - capacity: the number of decisions expected.
        ///   - rowTargetsAreRows: whether a decision that refers to a kept row's devices is appended
        ///     with that row (its devices are then the row's without comparing them).
        package init(version4: Bool, capacity: Int, rowTargetsAreRows: Bool = false) {
            self.version4 = version4
            self.rowTargetsAreRows = rowTargetsAreRows
            out.bytes.reserveCapacity(capacity * (version4 ? 6 : 48))
        }

        /// Appends the next decision.
        /// - Parameters:
        ///   - decision: the decision.
        ///   - receiver: its receiver.
        ///   - row: in a `PBR4` record, the state of the decision's row: its name must be the
        ///     receiver's, and the decision's devices are written only when they differ from its
        ///     devices; `nil` in `PBR3`.
        package mutating func append(_ decision: FanOutDecision, receiver: String, row: UserState?) {
            if version4 {
                guard matchesRows, let row, row.user == receiver else { return matchesRows = false }
            } else {
                out.string(receiver)
            }
            switch decision {
            case .suppressed(let reason):
                out.bytes.append(0)
                out.bytes.append(UInt8(reasons.firstIndex(of: reason)!))
            case .push(let request):
                switch request.body {
                case .bytes(let payload):
                    out.bytes.append(1)
                    out.difference(payload, from: previous)
                    previous = payload
                case .patched(let template, let badge, let patchedReceiver):
                    out.bytes.append(2)
                    let (number, isNew) = templates.number(of: ObjectIdentifier(template))
                    out.varint(UInt64(number))
                    if isNew {
                        out.run(template.bytes)
                        out.mark(template.badge)
                        out.mark(template.receiver)
                    }
                    if template.badge != nil { out.signed(Int64(badge)) }
                    if template.receiver != nil {
                        if patchedReceiver == receiver {
                            out.bytes.append(0)
                        } else {
                            out.varint(UInt64(patchedReceiver.utf8.count) + 1)
                            out.bytes += patchedReceiver.utf8
                        }
                    }
                }
                out.signed(Int64(request.badgeCounter))
                if version4 {
                    if case .row = request.targets, rowTargetsAreRows {
                        out.bytes.append(0)  // the row's own devices, standard headers
                        return
                    }
                    if let devices = request.targets.standardDevices, let row, SentMessageRecord.same(devices, row.devices) {
                        out.bytes.append(0)  // the row's own devices, standard headers
                        return
                    }
                    out.varint(UInt64(request.deliveryCount) + 1)
                } else {
                    out.varint(UInt64(request.deliveryCount))
                }
                switch request.targets {
                case .devices, .row:
                    request.targets.standardDevices!.withUnsafeBufferPointer { devices in  // borrowed: no copy of each device
                        for i in devices.indices {
                            out.device(devices[i], certificates: &certificates)
                            out.bytes.append(0)
                        }
                    }
                case .deliveries(let deliveries):
                    for delivery in deliveries {
                        out.device(delivery.device, certificates: &certificates)
                        if delivery.hasStandardHeaders {
                            out.bytes.append(0)
                        } else {
                            out.bytes.append(1)
                            out.varint(UInt64(delivery.headers.count))
                            for header in delivery.headers {
                                out.string(header.name)
                                out.string(header.value)
                            }
                        }
                    }
                }
            }
        }

        /// The record: its header, then the decisions appended.
        /// - Parameters:
        ///   - count: the number of decisions appended.
        ///   - roll: for `PBR4`, the stored roll's id and the row left out, if any.
        package func record(count: Int, roll: (id: Int64, skipped: Int?)?) -> [UInt8] {
            var header = RecordWriter()
            if version4, let roll {
                header.bytes += magicVersion4
                header.varint(UInt64(roll.id))
                header.varint(roll.skipped.map { UInt64($0) + 1 } ?? 0)
            } else {
                precondition(!version4, "a PBR4 record refers to a roll")
                header.bytes += magic
            }
            header.varint(UInt64(count))
            header.bytes.reserveCapacity(header.bytes.count + out.bytes.count)
            header.bytes += out.bytes
            return header.bytes
        }
    }

    /// Numbers for the templates or certificates of one record, in order of first use (a thing's
    /// fields are written at its first use only).
    struct Numbering<Key: Hashable> {
        /// The keys in number order; found by a scan while few (a record has one to three
        /// certificates and templates: no hashing), by `numbers` past `scanned`.
        private var keys: [Key] = []
        private var numbers: [Key: Int] = [:]
        private var last = -1  // receivers mostly share the one before
        private static var scanned: Int { 8 }

        /// The number of `key`, and whether this is its first use.
        mutating func number(of key: Key) -> (number: Int, isNew: Bool) {
            // Compared where it is kept, not copied out (a certificate's copy retains its strings).
            if last >= 0 && keys.withUnsafeBufferPointer({ $0[last] == key }) { return (last, false) }
            if let number = keys.count <= Self.scanned ? keys.firstIndex(of: key) : numbers[key] {
                last = number
                return (number, false)
            }
            let number = keys.count
            keys.append(key)
            if keys.count > Self.scanned {
                if numbers.isEmpty { for (n, key) in keys.enumerated() { numbers[key] = n } } else { numbers[key] = number }
            }
            last = number
            return (number, true)
        }
    }
}
