import PushBridgeJSON

/// One message a vendor REST send becomes: a message in a dialect's own shape, which the facade
/// then reads through that dialect's adapter like any other (no rule lives in the REST layer).
public struct VendorMessage: Sendable {
    /// The dialect whose adapter reads ``message``.
    public var dialect: String
    /// The message in the dialect's shape, with its id.
    public var message: JSONValue
    /// The sender (the vendor's default sender when the request names none).
    public var sender: String
    /// The receivers or the group, as the request named them (for the vendor's per-target answer).
    public var targets: [String]
    /// Whether ``targets`` are groups.
    public var isGroup: Bool

    /// - Parameters:
    ///   - dialect: the dialect id.
    ///   - message: the dialect message.
    ///   - sender: the sender.
    ///   - targets: the users, or the one group.
    ///   - isGroup: whether it is a group message.
    public init(dialect: String, message: JSONValue, sender: String, targets: [String], isGroup: Bool) {
        self.dialect = dialect
        self.message = message
        self.sender = sender
        self.targets = targets
        self.isGroup = isGroup
    }

    /// The message id the dialect message carries.
    public var id: String {
        if case .string(let id)? = message["id"] { return id }
        return ""
    }
}

extension InputError {
    /// The error as one line for a vendor's error text: `pointer: expected …, found …`.
    public var vendorText: String {
        var text = (pointer.description.isEmpty ? "/" : pointer.description) + ": expected " + expected
        if let found { text += ", found " + found }
        return text
    }
}
