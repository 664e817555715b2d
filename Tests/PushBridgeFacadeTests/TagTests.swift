import PushBridgeCore
import PushBridgeFacade
import PushBridgeStore
import PushBridgeStoreTestSupport
import Testing

/// Tencent's tags on every store: a tag is a label made by its first user; a user's tags read back
/// in code-point order; the per-user limit and unknown users refuse the whole call; a task's
/// audience by `TagsAnd` / `TagsOr` reads its pages.
@Suite("Tags")
struct TagTests {
    static func facade(_ backing: FacadeScenario.Backing, users: [String]) async throws -> PushFacade {
        let facade = await PushFacade(store: try backing.store())
        try await facade.configure(FacadeScenario.app)
        for user in users { _ = try await facade.register(user, dialect: "tencent-tim") }
        return facade
    }

    /// A new task's receivers, read two at a time and each page recorded.
    static func receivers(of facade: PushFacade, _ id: Int64, _ audience: TaskAudience) async throws -> [String] {
        var task = PushTaskTests.task(id, at: id * 1_000_000)
        task.audience = audience
        _ = try await facade.createTask(task, labelNames: nil, limit: 10, windowSeconds: 1)
        var found: [String] = []
        var cursor: String?
        while let page = try await facade.nextReceivers(of: id, limit: 2), !page.receivers.isEmpty {
            found += page.receivers
            _ = try await facade.recordPage(of: id, from: cursor, to: page.receivers.last, adding: TaskProgress(targets: page.receivers.count), finished: false, at: Instant(milliseconds: 2))
            cursor = page.receivers.last
        }
        return found
    }

    @Test("tags added, read, removed one by one and all at once; a refused call writes nothing", arguments: FacadeScenario.Backing.allCases)
    func tagCalls(_ backing: FacadeScenario.Backing) async throws {
        let facade = try await Self.facade(backing, users: ["u1", "u2", "u3"])
        try await facade.addTags([("u1", ["vip", "beta"]), ("u2", ["vip"])], at: Instant(milliseconds: 10))
        try await facade.addTags([("u1", ["vip", "Zed"])], at: Instant(milliseconds: 20))
        #expect(try await facade.tags(of: ["u1", "u2", "u3"]) == [["Zed", "beta", "vip"], ["vip"], []])
        #expect(try await facade.label("vip")?.count == 2)

        // An unknown user, or one past its limit, refuses the whole call.
        await #expect(throws: PushFacade.TagRefusal.unknownUser("ghost")) {
            try await facade.addTags([("u3", ["new"]), ("ghost", ["new"])], at: Instant(milliseconds: 30))
        }
        await #expect(throws: PushFacade.TagRefusal.tooManyTags("u1", maximum: 4)) {
            try await facade.addTags([("u2", ["new"]), ("u1", ["x", "y"])], maximum: 4, at: Instant(milliseconds: 30))
        }
        #expect(try await facade.tags(of: ["u1", "u2", "u3"]) == [["Zed", "beta", "vip"], ["vip"], []])
        #expect(try await facade.label("new") == nil)
        await #expect(throws: PushFacade.TagRefusal.unknownUser("ghost")) { try await facade.tags(of: ["u1", "ghost"]) }

        try await facade.removeTags([("u1", ["vip", "absent"])])
        #expect(try await facade.tags(of: ["u1", "u2"]) == [["Zed", "beta"], ["vip"]])
        try await facade.removeTags([("u1", nil), ("u3", nil)])
        #expect(try await facade.tags(of: ["u1", "u2"]) == [[], ["vip"]])
        await #expect(throws: PushFacade.TagRefusal.unknownUser("ghost")) { try await facade.removeTags([("ghost", nil)]) }
        // A removed user takes its tags with it.
        try await facade.removeUser("u2")
        #expect(try await facade.label("vip")?.count == 0)
    }

    @Test("a task's audience: users with every TagsAnd tag and one TagsOr tag, in code-point order; tags nobody has need not exist", arguments: FacadeScenario.Backing.allCases)
    func audience(_ backing: FacadeScenario.Backing) async throws {
        let facade = try await Self.facade(backing, users: ["a", "b", "c", "d", "e", "B"])
        try await facade.addTags([("a", ["x", "y"]), ("b", ["y"]), ("c", ["x", "z"]), ("d", ["z"]), ("B", ["x", "y", "z"])], at: Instant(milliseconds: 1))
        func receivers(_ id: Int64, all: [String], any: [String]) async throws -> [String] {
            try await Self.receivers(of: facade, id, TaskAudience(all: all, any: any))
        }
        #expect(try await receivers(1, all: [], any: ["y", "z"]) == ["B", "a", "b", "c", "d"])
        #expect(try await receivers(2, all: ["x"], any: ["y", "nobody"]) == ["B", "a"])
        #expect(try await receivers(3, all: ["x", "z"], any: []) == ["B", "c"])
        #expect(try await receivers(4, all: ["nobody"], any: []) == [])
        #expect(try await receivers(5, all: [], any: []) == ["B", "a", "b", "c", "d", "e"])
    }

    @Test("attributes: slots named once, values set, read and removed; refusals write nothing; a task's audience by AttrsAnd / AttrsOr", arguments: FacadeScenario.Backing.allCases)
    func attributes(_ backing: FacadeScenario.Backing) async throws {
        let facade = try await Self.facade(backing, users: ["a", "b", "c", "d"])
        try await facade.nameAttributes([(0, "sex"), (1, "city")])
        try await facade.nameAttributes([(1, "city"), (2, "level")])
        #expect(try await facade.attributeNames().map { "\($0.slot)=\($0.name)" } == ["0=sex", "1=city", "2=level"])
        await #expect(throws: PushFacade.AttributeRefusal.slotNamed(0, as: "sex")) { try await facade.nameAttributes([(3, "vip"), (0, "gender")]) }
        await #expect(throws: PushFacade.AttributeRefusal.nameTaken("city")) { try await facade.nameAttributes([(4, "city")]) }
        #expect(try await facade.attributeNames().count == 3)

        func values(_ pairs: [String: String]) -> [UserAttribute] { pairs.map { UserAttribute(name: $0.key, value: $0.value) } }
        try await facade.setAttributes([("a", values(["sex": "1", "city": "sz"])), ("b", values(["sex": "2", "city": "sz"])), ("c", values(["sex": "1", "city": "bj"]))])
        try await facade.setAttributes([("d", values(["level": "9"]))])
        await #expect(throws: PushFacade.AttributeRefusal.unknownAttribute("age")) { try await facade.setAttributes([("d", values(["city": "sh", "age": "3"]))]) }
        await #expect(throws: PushFacade.AttributeRefusal.unknownUser("ghost")) { try await facade.setAttributes([("d", values(["city": "sh"])), ("ghost", values(["city": "sh"]))]) }
        #expect(try await facade.attributes(of: ["a", "d"]) == [values(["city": "sz"]) + values(["sex": "1"]), values(["level": "9"])])
        try await facade.setAttributes([("a", values(["city": "gz"]))])
        #expect(try await facade.attributes(of: ["a"]) == [[UserAttribute(name: "city", value: "gz"), UserAttribute(name: "sex", value: "1")]])

        func receivers(_ id: Int64, _ audience: TaskAudience) async throws -> [String] { try await Self.receivers(of: facade, id, audience) }
        #expect(try await receivers(1, TaskAudience(attributes: values(["sex": "1"]))) == ["a", "c"])
        #expect(try await receivers(2, TaskAudience(attributes: values(["sex": "1"]) + values(["city": "bj"]))) == ["c"])
        #expect(try await receivers(3, TaskAudience(anyAttributes: values(["city": "gz"]) + values(["level": "9"]))) == ["a", "d"])
        #expect(try await receivers(4, TaskAudience(attributes: values(["sex": "2"]), anyAttributes: values(["city": "sz"]) + values(["city": "gz"]))) == ["b"])

        try await facade.removeAttributes([("a", ["sex", "level"])])
        #expect(try await facade.attributes(of: ["a"]) == [[UserAttribute(name: "city", value: "gz")]])
        await #expect(throws: PushFacade.AttributeRefusal.unknownAttribute("age")) { try await facade.removeAttributes([("a", ["age"])]) }
        try await facade.removeUser("c")
        #expect(try await receivers(5, TaskAudience(attributes: values(["sex": "1"]))) == [])
    }
}
