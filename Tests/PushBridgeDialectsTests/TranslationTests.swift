import PushBridgeConformance
import PushBridgeCore
import PushBridgeDialects
import PushBridgeJSON
import PushBridgeTestSupport
import Testing

/// `pushbridge translate`: every dialect fixture, into every other dialect.
@Suite("Translation")
struct TranslationTests {
    static let dialectFixtures = DialectRegistry.standard.ids.flatMap { Repository.fixtureFiles(under: $0) }

    /// Translates one fixture and checks the three promises: the result is a valid scenario;
    /// every canonical field that changed is named by a loss; with no loss it decides exactly as
    /// the source in every profile and passes the source's own expectation.
    @Test("translation loses nothing unreported", arguments: dialectFixtures)
    func translation(_ file: String) async throws {
        let source = try Fixture(path: Repository.root.appendingPathComponent(file).path)
        let engine = ScenarioEngine()
        let original = try engine.prepare(source.scenario)
        for target in DialectRegistry.standard.ids where target != source.scenario.dialect {
            let translation = try ScenarioTranslator().translate(source.scenario, to: target)
            let translated = try Fixture(path: "\(file) → \(target)", document: translation.document)
            let prepared = try engine.prepare(translated.scenario)
            #expect(prepared.adapter.id == target)

            for loss in translation.losses {
                let cell = try MappingTests.catalog.get().cell(loss.field, in: target)
                #expect(cell.fidelity <= .lossy, "\(file) → \(target): lost \(loss.field.rawValue), which Mappings/\(target).json says is \(cell.fidelity.rawValue)")
            }
            let covered = Set(translation.losses.flatMap { [$0.field] + $0.alsoChanges })
            let changed = original.stateDifferences(from: prepared).map(\.difference) + original.message.canonicalDifferences(from: prepared.message)
            for difference in changed {
                #expect(covered.contains(difference.field), "\(file) → \(target): \(difference) is not reported as a loss")
            }
            guard translation.isLossless else { continue }
            for profile in Profile.builtIn {
                let before = String(decoding: engine.decide(original, profile: profile).json, as: UTF8.self)
                let after = String(decoding: engine.decide(prepared, profile: profile).json, as: UTF8.self)
                #expect(before == after, "\(file) → \(target) rendered as \(profile.id)")
            }
            if source.scenario.expect != nil {
                let failure = await ConformanceRunner().judge(translated)
                #expect(failure == nil, "\(file) → \(target): \(failure?.description ?? "")")
            }
        }
    }
}
