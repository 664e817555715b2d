import PushBridgeCore
import PushBridgeDialects
import PushBridgeJSON
import Testing

/// A push task's message sent to each receiver: each dialect addresses its one-to-one message to
/// another user with another id, the rest untouched, and refuses a group message with its pointer.
@Suite("Readdressing a message")
struct ReaddressTests {
    static let messages: [(dialect: String, oneToOne: String, group: String, groupPointer: String)] = [
        (
            "easemob-legacy", #"{"id":"1","target_type":"users","target":["a","b"],"msg":{"type":"txt","msg":"hi"},"from":"shop","ext":{"k":1}}"#,
            #"{"id":"1","target_type":"chatgroups","target":["g"],"msg":{"type":"txt","msg":"hi"},"from":"shop"}"#, "/m/target_type"
        ),
        (
            "agora-silent", #"{"id":"1","conversationId":"a","from":"shop","to":"a","chatType":"Chat","body":{"type":"text","text":"hi"},"ext":{"k":1}}"#,
            #"{"id":"1","conversationId":"g","from":"shop","to":"g","chatType":"GroupChat","body":{"type":"text","text":"hi"}}"#, "/m/chatType"
        ),
        (
            "tencent-tim", #"{"id":"1","sender":"shop","conversation":{"type":"C2C","id":"a"},"elems":[{"type":"Text","text":"hi"}]}"#,
            #"{"id":"1","sender":"shop","conversation":{"type":"Group","id":"g"},"elems":[{"type":"Text","text":"hi"}]}"#, "/m/conversation/type"
        ),
    ]

    @Test("a one-to-one message goes to the new receiver with the new id; a group message is refused", arguments: 0..<3)
    func readdressed(_ index: Int) throws {
        let (dialect, oneToOne, group, pointer) = Self.messages[index]
        let adapter = try DialectRegistry.standard.adapter(dialect, at: .root)
        let original = try JSONParser.parse(oneToOne)
        let moved = try adapter.readdressed(original, at: .root / "m", to: "zed", id: "pushtask-7-zed")
        #expect(moved["id"] == "pushtask-7-zed")
        let address = try adapter.address(of: moved, at: .root)
        #expect(address.audience == .users(["zed"]) && address.sender == "shop", "\(moved.compactText)")
        let context = MessageContext(sender: "shop", receiver: "zed", now: Instant(milliseconds: 0))
        let read = try adapter.message(moved, at: .root, context: context)
        #expect(read.id == "pushtask-7-zed" && read.kind == .oneToOne, "\(moved.compactText)")
        // What is not the address or the id is kept as given.
        guard case .object(let before) = original, case .object(let after) = moved else { throw InputError(.wrongType, at: .root, expected: "objects") }
        #expect(before.keys == after.keys)
        for key in before.keys where !["id", "target", "to", "conversationId", "conversation"].contains(key) { #expect(before[key] == after[key], "\(key)") }
        let refused = #expect(throws: InputError.self) { try adapter.readdressed(try JSONParser.parse(group), at: .root / "m", to: "zed", id: "x") }
        #expect(refused?.pointer.description == pointer && refused?.code == .invalidValue, "\(String(describing: refused))")
    }
}
