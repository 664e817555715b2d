import PushBridgeJSON

/// One receiver's decision for a sent message.
///
/// A send holds its decisions in the fan-out's form (payloads shared by a render class, devices
/// where the store keeps them); ``decision`` writes one out as a plain ``PushDecision``.
public struct ReceiverDecision: Hashable, Sendable {
    /// The receiver.
    public var receiver: UserID
    /// The decision as the send made it.
    package private(set) var fanOut: FanOutDecision

    /// The decision: whether the receiver is pushed, and what exactly is sent or why not.
    public var decision: PushDecision {
        get { fanOut.decision }
        set { fanOut = FanOutDecision(newValue) }
    }

    /// - Parameters:
    ///   - receiver: the receiver.
    ///   - decision: its decision.
    public init(receiver: UserID, decision: PushDecision) {
        self.receiver = receiver
        self.fanOut = FanOutDecision(decision)
    }

    /// - Parameters:
    ///   - receiver: the receiver.
    ///   - fanOut: its decision as a send made it.
    package init(receiver: UserID, fanOut: FanOutDecision) {
        self.receiver = receiver
        self.fanOut = fanOut
    }

    /// `{"receiver":"u2","push":true,…}`: the decision JSON with the receiver first.
    public var json: [UInt8] {
        var w = JSONWriter(capacity: 600)
        write(to: &w)
        return w.bytes
    }

    /// Appends ``json``'s bytes to `w`.
    /// - Parameter w: the writer.
    public func write(to w: inout JSONWriter) {
        w.raw("{\"receiver\":")
        w.string(receiver)
        w.raw(",")
        fanOut.writeFields(to: &w)
    }

    public static func == (lhs: ReceiverDecision, rhs: ReceiverDecision) -> Bool {
        lhs.receiver == rhs.receiver && lhs.decision == rhs.decision
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(receiver)
        hasher.combine(decision)
    }
}
