import AsyncHTTPClient
import Foundation
import PushBridgeConformance
import PushBridgeJSON
import PushBridgeServiceConformance
import PushBridgeTestSupport
import PushBridgeServiceTestSupport
import PushBridgeVendorRESTTestSupport
import PushBridgeStoreTestSupport
import Testing

/// A service fixture's `capture` (ids the service makes up) and `answer` (an expected refusal) are
/// judged, not assumed: a refusal answered otherwise fails the fixture naming the step, a capture
/// that finds nothing fails it, and a malformed one is bad input naming the pointer.
@Suite("Service fixture steps")
struct ServiceFixtureStepsTests {
    /// Easemob fixture 011 (group and binding over REST, with refusals), changed by `edit`, written
    /// to a temporary file whose `mirrors` is absolute.
    static func variant(_ edit: (inout [String: Any]) -> Void) throws -> String {
        let original = Repository.fixtures + "/service/easemob/011-group-and-binding-over-rest.json"
        var object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: original))) as? [String: Any])
        object["mirrors"] = URL(fileURLWithPath: Repository.fixtures + "/easemob-legacy/004-group-message-summary.json").standardizedFileURL.path
        edit(&object)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("steps-\(UUID().uuidString).json").path
        try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: path))
        return path
    }

    static func editStep(_ index: Int, _ object: inout [String: Any], _ edit: (inout [String: Any]) -> Void) {
        var steps = object["steps"] as! [[String: Any]]
        edit(&steps[index])
        object["steps"] = steps
    }

    @Test func refusalsAndCapturesAreJudged() async throws {
        let unchanged = try Self.variant { _ in }
        // Step 4 (adding 6006 again) is refused 403 forbidden_op; expecting 200 must fail there.
        let wrongStatus = try Self.variant { Self.editStep(4, &$0) { $0["answer"] = ["status": 200] } }
        let wrongBody = try Self.variant { Self.editStep(4, &$0) { $0["answer"] = ["status": 403, "body": ["error": "resource_not_found"]] } }
        let nothingCaptured = try Self.variant { Self.editStep(3, &$0) { $0["capture"] = ["1421300621769": "/data/nothing"] } }
        defer { for path in [unchanged, wrongStatus, wrongBody, nothingCaptured] { try? FileManager.default.removeItem(atPath: path) } }
        try await withLiveService { service in
            try await withHTTPClient { client in
                let runner = ServiceConformanceRunner(baseURL: "http://127.0.0.1:\(service.port)", adminKey: testAdminKey, client: client)
                #expect(await runner.run(file: unchanged).failure == nil)
                for (path, wanted) in [(wrongStatus, "(/steps/4): expected HTTP 200, got HTTP 403"), (wrongBody, "expected HTTP 403 with {\"error\":\"resource_not_found\"}")] {
                    let failure = await runner.run(file: path).failure
                    guard case .implementation(let text)? = failure else { Issue.record("expected a failed request, got \(String(describing: failure))"); continue }
                    #expect(text.contains(wanted), "\(text)")
                }
                let failure = await runner.run(file: nothingCaptured).failure
                guard case .implementation(let text)? = failure else { Issue.record("expected a failed capture, got \(String(describing: failure))"); return }
                #expect(text.contains("/steps/3/capture/1421300621769: the answer has no id at /data/nothing"), "\(text)")
            }
        }
    }

    @Test(
        "a malformed capture or answer is bad input naming its pointer",
        arguments: [
            ("capture", #"{"1421300621769": "data/groupid"}"#, "/steps/3/capture/1421300621769"),
            ("answer", #"{"status": "403"}"#, "/steps/3/answer/status"),
            ("answer", #"{"status": 403, "headers": {}}"#, "/steps/3/answer/headers"),
        ])
    func malformedSteps(_ key: String, _ json: String, _ pointer: String) throws {
        let value = try JSONSerialization.jsonObject(with: Data(json.utf8))
        let path = try Self.variant { object in Self.editStep(3, &object) { $0[key] = value } }
        defer { try? FileManager.default.removeItem(atPath: path) }
        let error = try #require(throws: InputError.self) { try ServiceFixture(path: path) }
        #expect(error.pointer.description == pointer && error.file == path, "\(error)")
    }

    @Test(
        "vendor credentials: bad input names the file and pointer, never a secret's value",
        arguments: [
            (#"{"tencent": {"sdkAppId": 1400000001, "secretKey": 918273645546372819, "administrator": "a"}}"#, "/tencent/secretKey"),
            (#"{"easemob": {"org": "o", "app": "a", "clientId": "YXA6-id", "clientSecret": ["YXA6-hidden"]}}"#, "/easemob/clientSecret"),
            (#"{"easemob": {"org": "o", "app": "a", "clientId": "YXA6-id"}}"#, "/easemob/clientSecret"),
            (#"{"tencent": {"sdkAppId": 0, "secretKey": "k"}}"#, "/tencent/sdkAppId"),
            (#"{}"#, JSONPointer.root.description),
        ])
    func badVendorCredentials(_ json: String, _ pointer: String) throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("credentials-\(UUID().uuidString).json").path
        try json.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let error = try #require(throws: InputError.self) { try VendorCredentials(path: path) }
        #expect(error.pointer.description == pointer && error.file == path, "\(error)")
        #expect(!"\(error)".contains("918273645546372819") && !"\(error)".contains("YXA6-hidden"), "\(error)")
    }
}
