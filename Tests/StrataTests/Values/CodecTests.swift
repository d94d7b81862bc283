import XCTest
@testable import Strata

final class CodecTests: XCTestCase {
    // MARK: Base64

    /// A string's end is found eight bytes at a time: for a quote, a backslash or a control
    /// character at every offset of the first words, after ASCII or UTF-8 text and with
    /// other stops after it in the same word, the reader stops where a byte-by-byte reader
    /// would, with the same text and the same error.
    func testStringsEndWhereAByteByByteReaderEnds() {
        func byteByByte(_ json: [UInt8]) -> Result<[UInt8], StrataError>? {
            var i = 1
            while i < json.count, json[i] != 0x22, json[i] != 0x5C, json[i] >= 0x20 { i += 1 }
            guard i < json.count, json[i] != 0x5C else { return nil }  // the full reader's case
            guard json[i] == 0x22 else { return .failure(JSONReader.malformed(at: i, "control character in string")) }
            let text = Array(json[1..<i])
            guard String(validating: text, as: UTF8.self) != nil else { return .failure(JSONReader.malformed(at: 1, "string is not valid UTF-8")) }
            return .success(text)
        }
        let prefixes: [[UInt8]] = [Array("abcdefghijklmnopqrst".utf8), Array("é12345678ü9abcdefgh".utf8), Array("\u{1}xy".utf8)]
        let stops: [UInt8] = [0x22, 0x5C, 0x00, 0x01, 0x1F, 0x0A]
        let tails: [[UInt8]] = [[], [0x01, 0x22], [0x22, 0x5C, 0x01], Array("zz\"".utf8)]
        var checked = 0
        for prefix in prefixes {
            for length in 0...prefix.count {
                for stop in stops {
                    for tail in tails {
                        let json: [UInt8] = [0x22] + prefix[..<length] + [stop] + tail + Array(" padding\"".utf8)
                        json.withUnsafeBufferPointer { buf in
                            var r = JSONReader(buf)
                            let got: Result<[UInt8], StrataError>?
                            do { got = try r.readPlainString().map(Array.init).map { .success($0) } } catch let e as StrataError { got = .failure(e) } catch { got = nil; XCTFail("\(error)") }
                            switch (got, byteByByte(json)) {
                            case (nil, nil): break
                            case (.success(let a)?, .success(let b)?): XCTAssertEqual(a, b, "\(json)")
                            case (.failure(let a)?, .failure(let b)?): XCTAssertEqual(a.message, b.message, "\(json)")
                            default: XCTFail("\(json): \(String(describing: got)) against \(String(describing: byteByByte(json)))")
                            }
                            checked += 1
                        }
                    }
                }
            }
        }
        XCTAssertGreaterThan(checked, 1000)
    }

    func testBase64RFC4648Vectors() {
        let vectors: [(String, String)] = [
            ("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="), ("fooba", "Zm9vYmE="), ("foobar", "Zm9vYmFy"),
        ]
        for (plain, encoded) in vectors {
            XCTAssertEqual(Base64.encode(Array(plain.utf8)), encoded, plain)
            XCTAssertEqual(Base64.decode(encoded.utf8), Array(plain.utf8), encoded)
            var out: [UInt8] = [0x7B]
            Array(plain.utf8).withUnsafeBytes { Base64.encode($0, into: &out) }
            XCTAssertEqual(out, [0x7B] + Array(encoded.utf8), "appends to the buffer")
        }
    }

    func testBase64DecodeWithoutPadding() {
        XCTAssertEqual(Base64.decode("Zg".utf8), Array("f".utf8))
        XCTAssertEqual(Base64.decode("Zm8".utf8), Array("fo".utf8))
        XCTAssertEqual(Base64.decode("Zm9vYg".utf8), Array("foob".utf8))
        XCTAssertEqual(Base64.decode("Zm9vYmE".utf8), Array("fooba".utf8))
        XCTAssertEqual(Base64.decode("+/+/".utf8), [0xFB, 0xFF, 0xBF])
    }

    func testBase64RejectsInvalid() {
        let invalid = [
            "Z", "Zm9vY", "=", "==", "====", "Zg=", "Zg===", "Zm9v=", "Zm9=v", "Zg==Zg==",
            "Zm9v\n", " Zm9v", "Zm9v YmFy", "Zm9v\r\nYmFy", "Zm-v", "Zm_v", "Zm9v!", "Zm\u{0}v", "Zm9vé",
        ]
        for s in invalid { XCTAssertNil(Base64.decode(s.utf8), s.debugDescription) }
    }

    func testBase64RoundTripAllBytesAndLengths() {
        let all = (0...255).map { UInt8($0) }
        for len in 0...all.count {
            let bytes = Array(all[0..<len])
            let text = Base64.encode(bytes)
            XCTAssertEqual(text.utf8.count, (len + 2) / 3 * 4)
            XCTAssertEqual(Base64.decode(text.utf8), bytes)
            // Unpadded and non-contiguous input.
            let unpadded = text.utf8.filter { $0 != UInt8(ascii: "=") }
            XCTAssertEqual(Base64.decode(unpadded.lazy.map { $0 }), bytes)
        }
        XCTAssertEqual(Base64.decode(Substring("xxZm9vxx").dropFirst(2).dropLast(2).utf8), Array("foo".utf8))
    }

    // MARK: SHA-256

    func testSHA256Vectors() {
        XCTAssertEqual(SHA256.hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        XCTAssertEqual(SHA256.hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        XCTAssertEqual(SHA256.hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
                       "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        XCTAssertEqual(hex(SHA256.hash([UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000))),
                       "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
        XCTAssertEqual(SHA256.hex("héllo"), "3c48591d8d098a4538f5e013dfcf406e948eac4d3277b10bf614e295d6068179")
    }

    func testSHA256PaddingBoundaries() {
        let expected: [Int: String] = [
            55: "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318",
            56: "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a",
            63: "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34",
            64: "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb",
            119: "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb",
            120: "2f3d335432c70b580af0e8e1b3674a7c020d683aa5f73aaaedfdc55af904c21c",
        ]
        for (len, digest) in expected {
            let bytes = [UInt8](repeating: UInt8(ascii: "a"), count: len)
            XCTAssertEqual(hex(SHA256.hash(bytes)), digest, "\(len)")
            XCTAssertEqual(hex(SHA256.hash(bytes.lazy.map { $0 })), digest, "non-contiguous \(len)")
        }
        let cycled = (0..<768).map { UInt8(truncatingIfNeeded: $0) }
        XCTAssertEqual(hex(SHA256.hash(cycled)), "f3a25aa93aa2fbba28d79260535bbd6a5eb0fc1c24a8b0f04e12b484c1dfe363")
        XCTAssertEqual(SHA256.hash("abc".utf8).count, 32)
    }

    /// The processor's SHA instructions (where this machine has them) and the Swift rounds give the
    /// same digests: every length across several block boundaries, and the known vectors through both.
    func testSHA256HardwareAndSwiftAgree() {
        var rng = SystemRandomNumberGenerator()
        let bytes = (0..<1_100).map { _ in UInt8.random(in: 0...255, using: &rng) }
        bytes.withUnsafeBufferPointer { all in
            for len in 0...all.count where len <= 300 || len % 61 == 0 {
                let part = UnsafeBufferPointer(rebasing: all[0..<len])
                let swift = SHA256.hash(buffer: part, hardware: false)
                XCTAssertEqual(swift.count, 32)
                if SHA256.hardware { XCTAssertEqual(SHA256.hash(buffer: part, hardware: true), swift, "length \(len)") }
            }
        }
        for hardware in SHA256.hardware ? [false, true] : [false] {
            var abc = Array("abc".utf8)
            XCTAssertEqual(hex(abc.withUnsafeBufferPointer { SHA256.hash(buffer: $0, hardware: hardware) }),
                           "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", "hardware \(hardware)")
            abc = [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)
            XCTAssertEqual(hex(abc.withUnsafeBufferPointer { SHA256.hash(buffer: $0, hardware: hardware) }),
                           "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0", "hardware \(hardware)")
        }
    }

    private func hex(_ bytes: [UInt8]) -> String {
        bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    // MARK: ISO-8601

    func testISO8601Parse() {
        XCTAssertEqual(ISO8601.parse("1970-01-01T00:00:00Z".utf8), 0)
        XCTAssertEqual(ISO8601.parse("1970-01-01".utf8), 0)
        XCTAssertEqual(ISO8601.parse("2024-02-29T12:00:00Z".utf8), 1_709_208_000)
        XCTAssertEqual(ISO8601.parse("2024-02-29".utf8), 1_709_208_000 - 12 * 3600)
        XCTAssertEqual(ISO8601.parse("2000-03-01T00:00:00Z".utf8), 951_868_800)
        XCTAssertEqual(ISO8601.parse("1900-01-01T00:00:00Z".utf8), -2_208_988_800)
        XCTAssertEqual(ISO8601.parse("1969-12-31T23:59:59Z".utf8), -1)
        XCTAssertEqual(ISO8601.parse("9999-12-31T23:59:59Z".utf8), 253_402_300_799)
        XCTAssertEqual(ISO8601.parse("0000-01-01T00:00:00Z".utf8), -62_167_219_200)
        XCTAssertEqual(ISO8601.parse("0000-02-29".utf8), -62_167_219_200 + 59 * 86_400, "year 0 is a leap year")
        // Separators, zones, precision.
        let utc = 1_704_103_200.0  // 2024-01-01T10:00:00Z
        for s in ["2024-01-01T10:00:00Z", "2024-01-01t10:00:00z", "2024-01-01 10:00:00", "2024-01-01T10:00",
                  "2024-01-01T10:00Z", "2024-01-01T12:00:00+02:00", "2024-01-01T12:00+0200", "2024-01-01T04:30:00-05:30",
                  "2024-01-01T04:30-0530", "2024-01-01T10:00:00+00:00", "2024-01-01T10:00:00.000Z"] {
            XCTAssertEqual(ISO8601.parse(s.utf8), utc, s)
        }
        XCTAssertEqual(ISO8601.parse("2024-01-01T00:30:00+02:00".utf8), utc - 10 * 3600 + 1800 - 7200)
        XCTAssertEqual(ISO8601.parse("1970-01-01T00:00:00.5Z".utf8), 0.5)
        XCTAssertEqual(ISO8601.parse("1970-01-01T00:00:00.123456Z".utf8), 0.123456)
        XCTAssertEqual(ISO8601.parse("1970-01-01T00:00:00.123456789012345678Z".utf8) ?? -1, 0.123456789012345, accuracy: 1e-15)
        XCTAssertEqual(ISO8601.parse("2016-12-31T23:59:60Z".utf8), ISO8601.parse("2017-01-01T00:00:00Z".utf8), "leap second")
        XCTAssertEqual(ISO8601.parse(Substring("x2024-01-01T10:00:00Zx").dropFirst().dropLast().utf8), utc)
        XCTAssertEqual(ISO8601.parse("2024-01-01T10:00:00Z".utf8.lazy.map { $0 }), utc)
    }

    func testISO8601RejectsInvalid() {
        let invalid = [
            "", "2023-02-29", "1900-02-29", "2024-02-30", "2024-04-31", "2024-13-01", "2024-00-10", "2024-01-00",
            "2024-01-32", "2024-1-01", "24-01-01", "20240101", "+2024-01-01", "-0001-01-01", "10000-01-01",
            " 2024-01-01", "2024-01-01 ", "2024-01-01T", "2024-01-01Z", "2024-01-01X10:00", "2024-01-01T24:00",
            "2024-01-01T10:60", "2024-01-01T10:00:61", "2024-01-01T1:00", "2024-01-01T10:0", "2024-01-01T10:00:",
            "2024-01-01T10:00:0", "2024-01-01T10:00:00.", "2024-01-01T10:00:00.Z", "2024-01-01T10:00:00ZZ",
            "2024-01-01T10:00:00Z ", "2024-01-01T10:00:00+2:00", "2024-01-01T10:00:00+02", "2024-01-01T10:00:00+02:0",
            "2024-01-01T10:00:00+24:00", "2024-01-01T10:00:00+02:60", "2024-01-01T10:00:00+02:00x",
            "2024-01-01T10:00:00 UTC", "2024-01-01T10:00:00,5Z", "2024-01-01T10:00:00.5.5Z", "2024-01-01T10", "2024-0a-01",
        ]
        for s in invalid { XCTAssertNil(ISO8601.parse(s.utf8), s.debugDescription) }
    }

    func testISO8601Format() {
        XCTAssertEqual(ISO8601.format(0), "1970-01-01T00:00:00Z")
        XCTAssertEqual(ISO8601.format(-1), "1969-12-31T23:59:59Z")
        XCTAssertEqual(ISO8601.format(-86_400), "1969-12-31T00:00:00Z")
        XCTAssertEqual(ISO8601.format(-86_401), "1969-12-30T23:59:59Z")
        XCTAssertEqual(ISO8601.format(1_709_208_000), "2024-02-29T12:00:00Z")
        XCTAssertEqual(ISO8601.format(-2_208_988_800), "1900-01-01T00:00:00Z")
        XCTAssertEqual(ISO8601.format(0.5), "1970-01-01T00:00:00.500Z")
        XCTAssertEqual(ISO8601.format(-0.5), "1969-12-31T23:59:59.500Z")
        XCTAssertEqual(ISO8601.format(0.123456), "1970-01-01T00:00:00.123456Z")
        XCTAssertEqual(ISO8601.format(1_700_000_000.123), "2023-11-14T22:13:20.123Z")
        XCTAssertEqual(ISO8601.format(0.0005), "1970-01-01T00:00:00.000500Z")
        XCTAssertEqual(ISO8601.format(0.9999996), "1970-01-01T00:00:01Z", "rounds up into the next second")
        XCTAssertEqual(ISO8601.format(0.0000004), "1970-01-01T00:00:00Z")
        XCTAssertEqual(ISO8601.format(253_402_300_799), "9999-12-31T23:59:59Z")
        XCTAssertEqual(ISO8601.format(253_402_300_799.5), "9999-12-31T23:59:59.500Z")
        XCTAssertEqual(ISO8601.format(-62_167_219_200), "0000-01-01T00:00:00Z")
        // Out of range or non-finite: false and nothing appended.
        for v in [253_402_300_800, 253_402_300_799.9999999, -62_167_219_200.5, 1e300, -1e300, .nan, .infinity, -.infinity] {
            XCTAssertNil(ISO8601.format(v), "\(v)")
            var out: [UInt8] = [1, 2]
            XCTAssertFalse(ISO8601.format(v, into: &out))
            XCTAssertEqual(out, [1, 2])
        }
        var out = Array("x".utf8)
        XCTAssertTrue(ISO8601.format(0, into: &out))
        XCTAssertEqual(String(decoding: out, as: UTF8.self), "x1970-01-01T00:00:00Z")
    }

    func testISO8601RoundTrips() {
        for s in ["2024-02-29T00:00:00Z", "1969-12-31T23:59:59Z", "1970-01-01T00:00:00.500Z",
                  "1970-01-01T00:00:00.123456Z", "9999-12-31T23:59:59Z", "0000-01-01T00:00:00Z",
                  "1600-02-29T13:14:15.250Z", "2100-02-28T23:59:59Z", "1234-05-06T07:08:09.001Z"] {
            guard let t = ISO8601.parse(s.utf8) else { XCTFail(s); continue }
            XCTAssertEqual(ISO8601.format(t), s)
        }
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<5_000 {
            let whole = Int.random(in: -62_167_219_200...253_402_300_799, using: &rng)
            let t = Double(whole)
            guard let s = ISO8601.format(t) else { XCTFail("\(whole)"); continue }
            XCTAssertEqual(ISO8601.parse(s.utf8), t, s)
            let ms = Double(Int.random(in: -4_000_000_000_000...4_000_000_000_000, using: &rng)) / 1000
            guard let m = ISO8601.format(ms) else { XCTFail("\(ms)"); continue }
            XCTAssertEqual(ISO8601.parse(m.utf8), ms, m)
            // Whole milliseconds anywhere in 0000...9999, as parsing builds them.
            let far = Double(whole) + Double(Int.random(in: 0...999, using: &rng)) / 1_000
            guard let f = ISO8601.format(far) else { XCTFail("\(far)"); continue }
            XCTAssertEqual(ISO8601.parse(f.utf8), far, f)
            XCTAssertTrue(f.utf8.count == 20 || f.utf8.count == 24, f)
        }
    }

    // MARK: UUID

    func testUUID() {
        let text = "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"
        let bytes: [UInt8] = [0xE6, 0x21, 0xE1, 0xF8, 0xC3, 0x6C, 0x49, 0x5A, 0x93, 0xFC, 0x0C, 0x24, 0x7A, 0x3E, 0x6E, 0x5F]
        XCTAssertEqual(UUIDText.parse(text.utf8), bytes)
        XCTAssertEqual(UUIDText.parse(text.lowercased().utf8), bytes)
        XCTAssertEqual(UUIDText.format(bytes), text)
        XCTAssertEqual(UUIDText.canonical(text.utf8), text)
        XCTAssertEqual(UUIDText.canonical("e621e1f8-c36c-495a-93fc-0c247a3e6e5f".utf8), text)
        XCTAssertEqual(UUIDText.canonical("e621E1f8-c36C-495a-93FC-0c247a3e6e5F".utf8.lazy.map { $0 }), text)
        XCTAssertEqual(UUIDText.format([UInt8](repeating: 0, count: 16)), "00000000-0000-0000-0000-000000000000")
        XCTAssertEqual(UUIDText.format([0xAB]), "AB000000-0000-0000-0000-000000000000", "short input is zero-padded")
        let invalid = [
            "", "E621E1F8C36C495A93FC0C247A3E6E5F", "E621E1F8-C36C-495A-93FC-0C247A3E6E5", "E621E1F8-C36C-495A-93FC-0C247A3E6E5FF",
            "{E621E1F8-C36C-495A-93FC-0C247A3E6E5F}", "E621E1F8-C36C-495A-93FC_0C247A3E6E5F", "E621E1F-8C36C-495A-93FC-0C247A3E6E5F",
            "G621E1F8-C36C-495A-93FC-0C247A3E6E5F", " 621E1F8-C36C-495A-93FC-0C247A3E6E5F", "E621E1F8-C36C-495A-93FC-0C247A3E6E5 ",
            "E621E1F8-C36C-495A-93FC-0C247A3E6Eé", "E621E1F8+C36C-495A-93FC-0C247A3E6E5F",
        ]
        for s in invalid {
            XCTAssertNil(UUIDText.parse(s.utf8), s)
            XCTAssertNil(UUIDText.canonical(s.utf8), s)
        }
    }

    func testUUIDRandom() {
        var seen = Set<String>()
        for _ in 0..<1_000 {
            let u = UUIDText.random()
            XCTAssertEqual(UUIDText.canonical(u.utf8), u)
            let chars = Array(u)
            XCTAssertEqual(chars[14], "4")
            XCTAssertTrue("89AB".contains(chars[19]), u)
            seen.insert(u)
        }
        XCTAssertEqual(seen.count, 1_000)
    }

    // MARK: Decimal

    func testDecimalCanonical() {
        let cases: [(String, String)] = [
            ("0", "0"), ("-0", "0"), ("+0", "0"), ("000", "0"), ("007.5", "7.5"), ("-007.50", "-7.5"),
            ("+5", "5"), ("0.10", "0.1"), ("-0.00", "0"), ("00.001", "0.001"), ("-12.340", "-12.34"),
            ("100", "100"), ("1e3", "1000"), ("1E+03", "1000"), ("1e-05", "0.00001"), ("2e0", "2"), ("2E-000", "2"),
            ("-0e5", "0"), ("1.5e999999999", "1.5e999999999"), ("1.50", "1.5"), ("15e-1", "1.5"), ("0.15e1", "1.5"),
            ("1e21", "1000000000000000000000"), ("1e22", "1e22"), ("12e21", "12000000000000000000000"), ("12e22", "1.2e23"), ("-1.5e30", "-1.5e30"),
            ("1e-7", "0.0000001"), ("1e-8", "1e-8"), ("-2.50e-12", "-2.5e-12"), ("1234.5e-2", "12.345"),
            ("0.000e-999999999", "0"), ("1e-999999999", "1e-999999999"),
            ("123456789012345678901234567890.000000000000000000001", "123456789012345678901234567890.000000000000000000001"),
            ("1234567890123456789012345678901234567890", "1234567890123456789012345678901234567890"),
        ]
        for (input, expected) in cases {
            XCTAssertEqual(DecimalText.canonical(input.utf8), expected, input)
            XCTAssertEqual(DecimalText.canonical(expected.utf8), expected, "idempotent: \(expected)")
        }
        XCTAssertEqual(DecimalText.canonical("007.5".utf8.lazy.map { $0 }), "7.5")
        let invalid = [
            "", "-", "+", "NaN", "nan", "inf", "-inf", "Infinity", ".5", "-.5", "5.", "5.e3", "0x1F", "1_000", " 5", "5 ",
            "5\n", "--5", "+-5", "-+5", "1.2.3", "1e", "1e+", "1e-", "e5", "1e5.5", "1,5", "١٢", "1e1000000000",
            "10e999999999", "0.01e-999999999",
        ]
        for s in invalid { XCTAssertNil(DecimalText.canonical(s.utf8), s.debugDescription) }
    }

    func testDecimalCompare() {
        XCTAssertEqual(DecimalText.compare("1e3", "999.9"), 1)
        XCTAssertEqual(DecimalText.compare("999.9", "1e3"), -1)
        XCTAssertEqual(DecimalText.compare("0.10", "0.1"), 0)
        XCTAssertEqual(DecimalText.compare("1.50", "1.5"), 0)
        XCTAssertEqual(DecimalText.compare("1e3", "1000"), 0)
        XCTAssertEqual(DecimalText.compare("1.05e2", "105.000"), 0)
        XCTAssertEqual(DecimalText.compare("1e-3", "0.001"), 0)
        XCTAssertEqual(DecimalText.compare("0", "0.000"), 0)
        XCTAssertEqual(DecimalText.compare("0", "0e7"), 0)
        XCTAssertEqual(DecimalText.compare("-1", "1"), -1)
        XCTAssertEqual(DecimalText.compare("-2", "-1"), -1)
        XCTAssertEqual(DecimalText.compare("-1e3", "-999.9"), -1)
        XCTAssertEqual(DecimalText.compare("-0.000001", "0"), -1)
        XCTAssertEqual(DecimalText.compare("0.000001", "0"), 1)
        XCTAssertEqual(DecimalText.compare("12345678901234567890", "12345678901234567891"), -1)
        XCTAssertEqual(DecimalText.compare("0.30000000000000000001", "0.3"), 1)
        XCTAssertEqual(DecimalText.compare("1e-999999999", "0"), 1)
        XCTAssertEqual(DecimalText.compare("1e999999999", "9e999999998"), 1)

        // Pairwise over values in strictly increasing order.
        let ordered = [
            "-1e20", "-12345678901234567890.5", "-1000.01", "-1e3", "-999.9", "-10", "-9.99", "-1.5", "-1", "-0.5",
            "-0.001", "-1e-10", "0", "1e-10", "0.0001", "0.001", "0.01", "0.1", "0.5", "1", "1.00000000000000000001",
            "1.5", "2", "9.99", "10", "99.9999", "100", "999.9", "1e3", "1000.0001", "12345678901234567890", "1e20",
        ]
        for (i, a) in ordered.enumerated() {
            for (j, b) in ordered.enumerated() {
                XCTAssertEqual(DecimalText.compare(a, b), i < j ? -1 : (i > j ? 1 : 0), "\(a) vs \(b)")
            }
        }
        // Invalid text never traps and sorts after valid numbers.
        XCTAssertEqual(DecimalText.compare("abc", "1"), 1)
        XCTAssertEqual(DecimalText.compare("1", "abc"), -1)
        XCTAssertEqual(DecimalText.compare("abc", "abc"), 0)
        XCTAssertEqual(DecimalText.compare("1e99999999999999999999999", "1e99999999999999999999998"), 0, "saturated, no trap")
    }
}
