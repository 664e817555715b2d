import Foundation
import PushBridgeJSON

/// The ids a service made up during a fixture (an Easemob group id), each under the name the
/// fixture and its mirrored SDK fixture use: requests are sent with the service's value, and the
/// decision read back is compared with the fixture's name in its place.
struct CapturedNames {
    private var pairs: [(name: String, value: String)] = []

    /// Records the captures a step names, from its answer.
    /// - Throws: when the answer has no string or number at a capture's pointer.
    mutating func capture(_ step: ServiceFixture.Request, from answer: ServiceConformanceRunner.Answer) throws {
        for capture in step.captures {
            var value: JSONValue? = answer.body
            for token in capture.pointer.tokens {
                switch value {
                case .object(let members)?: value = members[token]
                case .array(let items)?: value = Int(token).flatMap { items.indices.contains($0) ? items[$0] : nil }
                default: value = nil
                }
            }
            switch value {
            case .string(let text)? where !text.isEmpty: pairs.append((capture.name, text))
            case .int(let number)?: pairs.append((capture.name, String(number)))
            default:
                throw ServiceConformanceRunner.Refused(
                    description: "\(step.pointer)/capture/\(capture.name): the answer has no id at \(capture.pointer): \(answer.body.compactText)")
            }
        }
    }

    /// Records that the service's `value` stands for the fixture's `name` (a message id it made).
    mutating func add(name: String, value: String) {
        guard !name.isEmpty, !value.isEmpty, name != value else { return }
        pairs.append((name, value))
    }

    /// The request with the service's values in place of the names, in its path and body strings.
    func applied(to request: ServiceFixture.Request) -> ServiceFixture.Request {
        guard !pairs.isEmpty else { return request }
        var request = request
        request.path = replace(request.path, pairs.map { ($0.name, $0.value) })
        request.body = request.body.map { map($0, pairs.map { ($0.name, $0.value) }) }
        return request
    }

    /// A message id as the service knows it.
    func service(_ id: String) -> String { replace(id, pairs.map { ($0.name, $0.value) }) }

    /// A decision with the fixture's names in place of the service's values.
    func fixture(_ decision: JSONValue) -> JSONValue {
        pairs.isEmpty ? decision : map(decision, pairs.map { ($0.value, $0.name) })
    }

    private func map(_ value: JSONValue, _ swaps: [(String, String)]) -> JSONValue {
        switch value {
        case .string(let text): return .string(replace(text, swaps))
        case .array(let items): return .array(items.map { map($0, swaps) })
        case .object(let members): return .object(JSONObject(members.map { (key: replace($0.key, swaps), value: map($0.value, swaps)) }))
        default: return value
        }
    }

    private func replace(_ text: String, _ swaps: [(String, String)]) -> String {
        swaps.reduce(text) { $0.replacingOccurrences(of: $1.0, with: $1.1) }
    }
}
