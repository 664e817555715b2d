import PushBridgeConformance
import PushBridgeJSON
import PushBridgeTestSupport
import Testing

@Suite("Strict JSON")
struct StrictJSONTests {
    static let rejected: [(String, String)] = [
        ("[1,]", "trailing comma in an array"),
        ("{\"a\":1,}", "trailing comma in an object"),
        ("{\"a\":1 // note\n}", "a comment"),
        ("/* c */ {}", "a leading comment"),
        ("{\"a\":1,\"a\":2}", "a duplicate key"),
        ("{'a':1}", "a single-quoted key"),
        ("['a']", "a single-quoted string"),
        ("NaN", "NaN"),
        ("[Infinity]", "Infinity"),
        ("[-Infinity]", "-Infinity"),
        ("18446744073709551616", "an integer past 2^64"),
        ("123456789012345678901234567890", "a huge integer"),
        ("1E400", "a double overflow"),
        ("01", "a leading zero"),
        ("+1", "a leading plus"),
        ("1.", "a bare decimal point"),
        (".5", "a leading decimal point"),
        ("\"a\tb\"", "a raw tab inside a string"),
        ("\"\\ud800\"", "a lone high surrogate"),
        ("\"\\udc00\"", "a lone low surrogate"),
        ("\"\\x41\"", "an invalid escape"),
        ("[1] x", "trailing content"),
        ("[1][2]", "two documents"),
        ("tru", "a truncated literal"),
        ("", "empty input"),
        ("{\"a\" 1}", "a missing colon"),
    ]

    @Test("strict parsing rejects", arguments: rejected)
    func rejects(_ sample: (String, String)) {
        #expect(throws: InputError.self, "\(sample.1) must be rejected") { try JSONParser.parse(sample.0) }
    }

    @Test func rejectsInvalidUTF8() {
        let bytes: [UInt8] = [0x22, 0xC3, 0x28, 0x22]
        #expect(throws: InputError.self) { try JSONParser.parse(bytes) }
        let overlong: [UInt8] = [0x22, 0xC0, 0xAF, 0x22]
        #expect(throws: InputError.self) { try JSONParser.parse(overlong) }
    }

    @Test func duplicateKeyErrorNamesThePointer() throws {
        do {
            _ = try JSONParser.parse("{\"aps\":{\"badge\":1,\"badge\":2}}")
            Issue.record("expected a duplicate-key error")
        } catch let error as InputError {
            #expect(error.pointer.description == "/aps/badge")
            #expect(error.code == .malformedJSON)
        }
    }

    @Test func syntaxErrorNamesThePointerAndPosition() throws {
        do {
            _ = try JSONParser.parse("{\"receiver\":{\"calls\":[{\"call\":\"x\",}]}}")
            Issue.record("expected a syntax error")
        } catch let error as InputError {
            #expect(error.pointer.description == "/receiver/calls/0")
            #expect(error.description.contains("line 1"))
        }
    }

    @Test func acceptsStrictDocuments() throws {
        let value = try JSONParser.parse(" {\"a\":[1,-2.5e3,true,false,null,\"\\u00e9\\ud83d\\ude00\\n\"],\"b\":{}} ")
        #expect(value["a"]?.arrayValue?.count == 6)
        #expect(value["a"]?.arrayValue?[5] == .string("é😀\n"))
        #expect(try JSONParser.parse("9223372036854775807") == .int(Int64.max))
        #expect(try JSONParser.parse("null") == .null)
    }

    @Test func typesAreDistinct() throws {
        let forms = ["1", "true", "1.0", "\"1\""]
        for (i, a) in forms.enumerated() {
            for (j, b) in forms.enumerated() {
                let equal = try StrictComparison.equal(expected: Array(a.utf8), got: Array(b.utf8))
                #expect(equal == (i == j), "\(a) vs \(b)")
            }
        }
    }

    @Test func keyOrderDoesNotMatterButArrayOrderDoes() throws {
        #expect(try StrictComparison.equal(expected: Array("{\"a\":1,\"b\":[1,2]}".utf8), got: Array("{\"b\":[1,2],\"a\":1}".utf8)))
        #expect(try !StrictComparison.equal(expected: Array("[1,2]".utf8), got: Array("[2,1]".utf8)))
    }

    @Test func comparisonRejectsWhatJSONCAloneAccepts() {
        for bad in ["{\"a\":1,\"a\":2}", "{'a':1}", "[NaN]", "18446744073709551616"] {
            #expect(throws: StrictComparison.MalformedDocument.self, "\(bad)") {
                try StrictComparison.equal(expected: Array("{\"a\":1}".utf8), got: Array(bad.utf8))
            }
        }
    }

    @Test func diffListsEveryDifferenceWithTypes() throws {
        let expected = "{\"aps\":{\"alert\":{\"body\":\"hi\"},\"badge\":1,\"sound\":\"default\",\"mutable-content\":true},\"f\":\"6001\"}"
        let got = "{\"aps\":{\"alert\":{\"body\":\"hi\"},\"badge\":\"1\",\"mutable-content\":1},\"f\":\"6001\",\"x\":[1]}"
        let diffs = try StrictComparison.differences(expected: Array(expected.utf8), got: Array(got.utf8))
        let lines = diffs.map(\.description)
        #expect(lines.contains("/aps/badge: expected 1 (integer), got \"1\" (string)"))
        #expect(lines.contains("/aps/sound: expected \"default\" (string), got nothing"))
        #expect(lines.contains("/aps/mutable-content: expected true (boolean), got 1 (integer)"))
        #expect(lines.contains("/x: expected nothing, got [1] (array)"))
        #expect(diffs.count == 4)
    }

    @Test func writerRoundTripsTypesAndRawUTF8() throws {
        let value: JSONValue = ["s": "é/\"\u{1}", "i": 1, "d": 1.0, "b": true, "n": nil, "a": [0.5, -3]]
        var w = JSONWriter()
        w.write(value)
        #expect(w.string == "{\"s\":\"é/\\\"\\u0001\",\"i\":1,\"d\":1.0,\"b\":true,\"n\":null,\"a\":[0.5,-3]}")
        #expect(try JSONParser.parse(w.bytes) == value)
        #expect(JSONWriter.encodedLength(ofString: "é/\"\u{1}") == w.string.utf8.count - "{\"s\":".utf8.count
            - ",\"i\":1,\"d\":1.0,\"b\":true,\"n\":null,\"a\":[0.5,-3]}".utf8.count)
    }

    @Test func pointersEscape() {
        #expect((JSONPointer.root / "a/b" / "c~d" / 0).description == "/a~1b/c~0d/0")
        #expect(JSONPointer("/a~1b/c~0d/0")?.tokens == ["a/b", "c~d", "0"])
    }
}
