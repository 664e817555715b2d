import Foundation
import PushBridgeJSON

/// Which fixtures to run (`--filter`, `--dialect`, `--profile`).
public struct FixtureSelection: Hashable, Sendable {
    /// A substring of the path or name, or a glob (`*`, `?`) matched against the path or name.
    public var pattern: String?
    /// Only scenarios in this dialect, and only this variant of equivalence fixtures.
    public var dialect: String?
    /// Only scenarios rendered with this profile, and only this profile's expectation of equivalence fixtures.
    public var profile: String?

    public init(pattern: String? = nil, dialect: String? = nil, profile: String? = nil) {
        self.pattern = pattern
        self.dialect = dialect
        self.profile = profile
    }

    /// Every fixture.
    public static let all = FixtureSelection()

    /// Whether the pattern takes a fixture by its path or name.
    public func takes(path: String, name: String?) -> Bool {
        guard let pattern, !pattern.isEmpty else { return true }
        let candidates = [path, name].compactMap { $0 }
        if pattern.contains("*") || pattern.contains("?") {
            return candidates.contains { fnmatch(pattern, $0, 0) == 0 || fnmatch("*" + pattern + "*", $0, 0) == 0 }
        }
        return candidates.contains { $0.localizedCaseInsensitiveContains(pattern) }
    }

    /// Whether the dialect and profile filters take a scenario.
    public func takes(dialect: String, profile: String) -> Bool {
        (self.dialect == nil || self.dialect == dialect) && (self.profile == nil || self.profile == profile)
    }
}

/// A fixture file as loaded: a scenario or an equivalence fixture.
public enum LoadedFixture: Sendable {
    case scenario(Fixture)
    case equivalence(EquivalenceFixture)

    /// Reads and validates a fixture file of either kind.
    /// - Throws: `InputError` naming the file and the pointer.
    public init(file: String) throws {
        let document: JSONValue
        do {
            document = try JSONParser.parse(FixtureDiscovery.read(file))
        } catch let error as InputError {
            throw error.in(file: file)
        }
        self = EquivalenceFixture.isEquivalence(document)
            ? .equivalence(try EquivalenceFixture(path: file, document: document))
            : .scenario(try Fixture(path: file, document: document))
    }
}

extension LoadedFixture {
    /// The fixture as a selection takes it (an equivalence fixture cut down to the selected
    /// dialect and profile); `nil` when the selection leaves it out.
    public func selected(by selection: FixtureSelection) -> LoadedFixture? {
        switch self {
        case .scenario(let fixture):
            let s = fixture.scenario
            guard selection.takes(path: fixture.path, name: s.name), selection.takes(dialect: s.dialect, profile: s.profile ?? s.dialect) else { return nil }
            return self
        case .equivalence(let fixture):
            guard selection.takes(path: fixture.path, name: fixture.name) else { return nil }
            return fixture.restricted(to: selection).map(LoadedFixture.equivalence)
        }
    }
}

extension EquivalenceFixture {
    /// The fixture cut down to a selection's dialect and profile; `nil` when nothing is left.
    public func restricted(to selection: FixtureSelection) -> EquivalenceFixture? {
        var copy = self
        if let dialect = selection.dialect { copy.variants = variants.filter { $0.dialect == dialect } }
        if let profile = selection.profile {
            guard expectations.isEmpty || expectations.contains(where: { $0.profile.id == profile }) else { return nil }
            copy.expectations = expectations.filter { $0.profile.id == profile }
        }
        return copy.variants.isEmpty ? nil : copy
    }
}
