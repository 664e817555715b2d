import PushBridgeCore

/// The `deliveries` columns a claim returns, by name, in the order every store selects them
/// (``StoredColumn/sql``) and ``StoredRow/claimedDelivery()`` reads them.
package enum ClaimedDeliveryColumn: Int, StoredColumn, Sendable {
    case id, messageID, receiver, token, environment, boundAt, headers, payload, queuedAt, attempts


    /// The column's name in the `deliveries` table.
    package var columnName: String {
        switch self {
        case .id: "id"
        case .messageID: "message_id"
        case .receiver: "receiver"
        case .token: "token"
        case .environment: "environment"
        case .boundAt: "bound_at"
        case .headers: "headers"
        case .payload: "payload"
        case .queuedAt: "queued_at"
        case .attempts: "attempts"
        }
    }
}

/// The `deliveries` columns a message's delivery records are read from, by name, in the order
/// every store selects them (``StoredColumn/sql``) and ``StoredRow/deliveryRecord()`` reads them.
package enum DeliveryRecordColumn: Int, StoredColumn, Sendable {
    case id, receiver, token, state, attempts, status, reason, updatedAt, deviceRemoved


    /// The column's name in the `deliveries` table.
    package var columnName: String {
        switch self {
        case .id: "id"
        case .receiver: "receiver"
        case .token: "token"
        case .state: "state"
        case .attempts: "attempts"
        case .status: "status"
        case .reason: "reason"
        case .updatedAt: "updated_at"
        case .deviceRemoved: "device_removed"
        }
    }
}

/// The `devices` columns a user's device is read from (`d` the devices table), by name, in the
/// order every store selects them (``StoredColumn/sql``) and ``DeviceRow/device(at:certificate:)`` reads them.
package enum DeviceColumn: Int, StoredColumn, Sendable {
    case token, certificate, boundAt

    /// The select list of the devices table `d`.
    package static let sql = allCases.map { "d." + $0.columnName }.joined(separator: ", ")

    /// The column's name in the `devices` table.
    package var columnName: String {
        switch self {
        case .token: "token"
        case .certificate: "certificate_id"
        case .boundAt: "bound_at"
        }
    }
}

// Reading an outbox row or a device into their values: the decoders both stores share.
extension StoredRow {
    /// A claimed delivery, from ``ClaimedDeliveryColumn``'s columns.
    /// - Throws: ``StoreError`` `unexpected-value` for an environment or headers PushBridge did not write.
    package func claimedDelivery() throws -> OutboxDelivery {
        func column(_ c: ClaimedDeliveryColumn) -> Int { c.rawValue }
        let word = try string(column(.environment))
        guard let environment = APNsEnvironment(rawValue: word) else {
            throw StoreError(.unexpectedValue, "environment \"\(word)\"", context: "deliveries.environment")
        }
        return OutboxDelivery(
            id: try int64(column(.id)), messageID: try string(column(.messageID)), receiver: try string(column(.receiver)),
            token: try string(column(.token)), environment: environment, boundAt: Instant(milliseconds: try int64(column(.boundAt))),
            headers: try OutboxDelivery.decode(try bytes(column(.headers))), payload: try bytes(column(.payload)),
            queuedAt: Instant(milliseconds: try int64(column(.queuedAt))), attempts: try int(column(.attempts)))
    }

    /// A delivery's record, from ``DeliveryRecordColumn``'s columns.
    /// - Throws: ``StoreError`` `unexpected-value` for a state code PushBridge did not write.
    package func deliveryRecord() throws -> DeliveryRecord {
        func column(_ c: DeliveryRecordColumn) -> Int { c.rawValue }
        return DeliveryRecord(
            id: try int64(column(.id)), receiver: try string(column(.receiver)), token: try string(column(.token)),
            state: try StoredCodes.deliveryState(try int(column(.state))), attempts: try int(column(.attempts)),
            status: try optionalInt(column(.status)), reason: try optionalString(column(.reason)),
            updatedAt: Instant(milliseconds: try int64(column(.updatedAt))), deviceRemoved: try bool(column(.deviceRemoved)))
    }

    /// A device, from ``DeviceColumn``'s columns starting at `offset`; `nil` for the NULLs of a
    /// receiver without devices (an outer join), or a certificate the store no longer has.
    /// - Parameters:
    ///   - offset: the first one's column.
    ///   - certificate: the certificate a `certificate_id` names (the store's kept certificates).
    package func device(at offset: Int, certificate: (Int64) throws -> Certificate?) throws -> Device? {
        guard !isNull(offset + DeviceColumn.token.rawValue),
            let certificate = try certificate(try int64(offset + DeviceColumn.certificate.rawValue))
        else { return nil }
        return Device(
            token: try string(offset + DeviceColumn.token.rawValue), certificate: certificate,
            boundAt: Instant(milliseconds: try int64(offset + DeviceColumn.boundAt.rawValue)))
    }
}
