import PushBridgeCore

/// How the SQL stores write small closed vocabularies as integers (presence 0 offline, 1 online,
/// 2 background; remind type 0 All, 1 MentionOnly, 2 None; delivery state 0 queued, 1 delivered,
/// 2 failed). One definition for SQLite and PostgreSQL, so both stores read each other's codes alike.
public enum StoredCodes {
    /// Presence as (code, background-since milliseconds).
    public static func encode(_ presence: Presence) -> (Int, Int64?) {
        switch presence {
        case .offline: return (0, nil)
        case .online: return (1, nil)
        case .background(let since): return (2, since.milliseconds)
        }
    }

    /// A remind type's code.
    public static func encode(_ remind: RemindType) -> Int {
        switch remind {
        case .all: return 0
        case .mentionOnly: return 1
        case .none: return 2
        }
    }

    /// A remind type from its code (`nil`: inherited).
    /// - Throws: ``StoreError`` `unexpected-value` naming `column` for a code PushBridge does not write.
    public static func decodeRemind(_ code: Int?, column: String) throws -> RemindType? {
        switch code {
        case nil: return nil
        case 0: return .all
        case 1: return .mentionOnly
        case 2: return RemindType.none
        case let other?: throw StoreError(.unexpectedValue, "remind type code \(other)", context: column)
        }
    }

    /// A delivery state's code.
    public static func code(_ state: DeliveryState) -> Int {
        switch state {
        case .queued: return 0
        case .delivered: return 1
        case .failed: return 2
        }
    }

    /// A delivery state from its code.
    /// - Throws: ``StoreError`` `unexpected-value` for a code PushBridge does not write.
    public static func deliveryState(_ code: Int) throws -> DeliveryState {
        switch code {
        case 0: return .queued
        case 1: return .delivered
        case 2: return .failed
        default: throw StoreError(.unexpectedValue, "delivery state \(code)", context: "deliveries.state")
        }
    }
}
