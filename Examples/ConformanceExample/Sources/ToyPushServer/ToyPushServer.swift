import PushBridgeCore
import PushBridgeDialects
import PushBridgeJSON

/// A stand-in for your push service: it takes a scenario document and answers with the decision
/// JSON your server would send to APNs. Here it keeps its own badge policy on top of PushBridge's
/// engine, so the example shows both a passing and a failing implementation.
public struct ToyPushServer: Sendable {
    /// Whether the server forgets to count the push in the badge (a typical migration bug).
    public var forgetsBadgeIncrement: Bool

    public init(forgetsBadgeIncrement: Bool = false) { self.forgetsBadgeIncrement = forgetsBadgeIncrement }

    /// The decision JSON for a scenario document.
    public func handle(_ document: [UInt8]) throws -> [UInt8] {
        let scenario = try Scenario(JSONParser.parse(document))
        let decision = try ScenarioEngine().decide(scenario)
        guard forgetsBadgeIncrement, case .push(var request) = decision else { return decision.json }
        request.payload = Array(String(decoding: request.payload, as: UTF8.self)
            .replacingOccurrences(of: "\"badge\":\(request.badgeCounter)", with: "\"badge\":\(request.badgeCounter - 1)").utf8)
        return PushDecision.push(request).json
    }
}
