import PushBridgeJSON

/// A decision as a fan-out makes it: ``PushDecision``'s content in the fan-out's own form, written
/// out as a ``PushDecision`` when a caller asks for one.
///
/// A 100,000-member send makes 100,000 of these; most share one written payload and differ only in
/// the badge digits (and, in the Easemob profile, the receiver's id), and their devices are kept
/// where the store keeps them. The record, the outbox and the service's answer read them in this
/// form (``FanOutRequest``): the bytes they write are those of the plain decision.
package enum FanOutDecision: Sendable {
    case push(FanOutRequest)
    case suppressed(SuppressionReason)

    /// - Parameter decision: a plain decision (its request held as it is).
    package init(_ decision: PushDecision) {
        switch decision {
        case .push(let request): self = .push(FanOutRequest(request))
        case .suppressed(let reason): self = .suppressed(reason)
        }
    }

    /// The plain decision: the payload and deliveries written out.
    package var decision: PushDecision {
        switch self {
        case .push(let request): return .push(request.request)
        case .suppressed(let reason): return .suppressed(reason)
        }
    }

    /// Writes ``PushDecision/json``'s fields after its opening brace (`"push":…}`), a patched
    /// payload directly.
    package func writeFields(to w: inout JSONWriter) {
        switch self {
        case .suppressed(let reason): PushDecision.writeSuppressed(reason, to: &w)
        case .push(let request): PushDecision.writePush(payload: { request.writePayload(into: &$0) }, deliveries: request.deliveries, to: &w)
        }
    }
}

/// An ``APNsRequest`` as a fan-out holds it: its payload as bytes or as a render class's template
/// with one receiver's values, its devices in full or where a store keeps them.
package struct FanOutRequest: Sendable {
    /// How the payload is held: its bytes, or a class's template with one receiver's values.
    package enum Body: Sendable {
        case bytes([UInt8])
        case patched(PayloadTemplate, badge: Int, receiver: String)

        /// The payload's bytes (a patched payload written out).
        package var written: [UInt8] {
            switch self {
            case .bytes(let bytes): return bytes
            case .patched(let template, let badge, let receiver): return template.payload(badge: badge, receiver: receiver)
            }
        }
    }

    /// How the deliveries are held: in full, as devices that all take the standard headers, or as
    /// the devices of a row kept elsewhere (a store's kept group), with the standard headers.
    package enum Targets: Sendable {
        case deliveries([APNsDelivery])
        case devices([Device])
        case row(DeviceRows, Int)

        /// The devices, when they all take the standard headers.
        package var standardDevices: [Device]? {
            switch self {
            case .deliveries: return nil
            case .devices(let devices): return devices
            case .row(let rows, let row): return rows.devices(ofRow: row)
            }
        }
    }

    package var body: Body
    package var targets: Targets
    /// The receiver's badge counter after this push.
    package var badgeCounter: Int

    /// - Parameters:
    ///   - body: the payload.
    ///   - targets: the deliveries.
    ///   - badgeCounter: the counter after this push.
    package init(body: Body, targets: Targets, badgeCounter: Int) {
        self.body = body
        self.targets = targets
        self.badgeCounter = badgeCounter
    }

    /// - Parameter request: a plain request (its payload and deliveries held as they are).
    package init(_ request: APNsRequest) {
        self.init(body: .bytes(request.payload), targets: .deliveries(request.deliveries), badgeCounter: request.badgeCounter)
    }

    /// The plain request.
    package var request: APNsRequest {
        APNsRequest(payload: payload, deliveries: deliveries, badgeCounter: badgeCounter)
    }

    /// The payload's bytes (a patched one written out).
    package var payload: [UInt8] { body.written }

    /// One delivery per device, newest binding first.
    package var deliveries: [APNsDelivery] {
        switch targets {
        case .deliveries(let deliveries): return deliveries
        case .devices(let devices): return devices.map(APNsDelivery.init(device:))
        case .row(let rows, let row): return rows.devices(ofRow: row).map(APNsDelivery.init(device:))
        }
    }

    /// The number of deliveries (without writing them out).
    package var deliveryCount: Int {
        switch targets {
        case .deliveries(let deliveries): return deliveries.count
        case .devices(let devices): return devices.count
        case .row(let rows, let row): return rows.devices(ofRow: row).count
        }
    }

    /// Appends the payload to `w` (a patched payload is written there directly).
    package func writePayload(into w: inout JSONWriter) {
        switch body {
        case .bytes(let bytes): w.raw(bytes)
        case .patched(let template, let badge, let receiver): template.write(badge: badge, receiver: receiver, into: &w)
        }
    }
}

/// Receivers' device lists kept by their owner (a store's kept group, in row order), which the
/// requests of a send to them refer to by row: one reference shared by the whole send, instead of
/// each request taking a reference to its receiver's list (a cache miss on a 100,000-member send's
/// every list, then another when the decisions are freed).
package final class DeviceRows: Sendable {
    private let devicesOfRow: @Sendable (Int) -> [Device]

    /// - Parameter devicesOfRow: the devices of a row, newest binding first.
    package init(_ devicesOfRow: @escaping @Sendable (Int) -> [Device]) {
        self.devicesOfRow = devicesOfRow
    }

    /// The devices of row `row`, newest binding first.
    package func devices(ofRow row: Int) -> [Device] { devicesOfRow(row) }
}

