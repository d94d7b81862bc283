// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Strata",
    products: [
        // libstrata.so: the C library. Build it self-contained with
        // `swift build -c release --product strata -Xswiftc -static-stdlib`
        // (the Makefile and CMakeLists.txt do).
        .library(name: "strata", type: .dynamic, targets: ["StrataC"]),
        .library(name: "Strata", targets: ["Strata"]),
        // The `strata` command (docs/cli.md); CMake builds it with the library and installs it as bin/strata.
        .executable(name: "strata-cli", targets: ["StrataCLI"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        .systemLibrary(name: "CSQLite", path: "Sources/CSQLite", pkgConfig: "sqlite3",
                       providers: [.apt(["libsqlite3-dev"])]),
        // What libstrata.so defines in place of the static Swift runtime's own (Sources/CStrataStart/CommandLine.c).
        .target(name: "CStrataStart", path: "Sources/CStrataStart", cSettings: [.unsafeFlags(["-gdwarf-4"])]),
        // SHA-256 on the processor's SHA instructions, for Values/SHA256.swift (Sources/CStrataSHA).
        // The C targets' debug information in DWARF 4, as Swift's: valgrind 3.19 (the memcheck tests)
        // misreads some of the DWARF 5 clang writes by default, and then gives up on the whole library.
        .target(name: "CStrataSHA", path: "Sources/CStrataSHA", cSettings: [.unsafeFlags(["-gdwarf-4"])]),
        .target(name: "Strata", dependencies: ["CSQLite", "CStrataSHA"], path: "Sources/Strata",
                // Type metadata through accessor functions, not names demangled at run time:
                // a process's first open is about 15% faster (benchmarks/RESULTS.md, open).
                // Each function in a section of its own, for the library's link order (StrataC).
                // No implicit `import _StringProcessing`: its regular-expression engine stays out of
                // the library (Support/String+Search.swift has the searches Strata needs).
                swiftSettings: [.unsafeFlags(["-Xfrontend", "-disable-concrete-type-metadata-mangled-name-accessors",
                                              "-Xfrontend", "-function-sections",
                                              "-Xfrontend", "-disable-implicit-string-processing-module-import"]),
                                // The library is built without run-time exclusivity checks: they cost about 4% of a
                                // bulk insert's instructions (5,000 trips inserted and saved: 1,059M with them, 1,020M
                                // without), and the debug build the Swift tests run keeps them, so a violation fails the suite.
                                .unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]),
        .target(
            name: "StrataC", dependencies: ["Strata", "CStrataStart"], path: "Sources/StrataC",
            exclude: ["strata.map", "link"],
            // As for Strata: the shim's first handle (a dictionary of them) no longer looks up
            // a conformance at run time (about 0.1M instructions of a fresh process's open).
            swiftSettings: [.unsafeFlags(["-Xfrontend", "-disable-concrete-type-metadata-mangled-name-accessors",
                                          "-Xfrontend", "-function-sections",
                                          "-Xfrontend", "-disable-implicit-string-processing-module-import"])],
            linkerSettings: [
                .unsafeFlags([
                    // libstdc++ (which the static Swift runtime needs) linked in as an archive, not loaded
                    // as libstdc++.so.6: a fresh process's open about 10% faster (Sources/StrataC/link).
                    "-L", "\(Context.packageDirectory)/Sources/StrataC/link",
                    // The unwinder libstdc++ needs linked in as well (libgcc_eh), not loaded as libgcc_s.so.1:
                    // one library fewer to map and relocate, and no libgcc_s constructor probing the CPU.
                    "-Xclang-linker", "-static-libgcc",
                    // lld (shipped with Swift) instead of gold, for DT_RELR: the library's ~22,000 relative
                    // relocations packed into a 4 kB bitmap instead of a 0.5 MB table (glibc >= 2.36 loads it;
                    // gold does not know -z pack-relative-relocs).
                    "-use-ld=lld",
                    "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs",
                    // The functions a fresh process runs to open a store and answer its first query laid out
                    // together, in the order they first run: fewer pages of code to fault in at every start
                    // (scripts/link-order.sh writes the list; a name no longer in the library is skipped).
                    "-Xlinker", "--symbol-ordering-file=\(Context.packageDirectory)/Sources/StrataC/link/order.txt",
                    "-Xlinker", "--no-warn-symbol-ordering",
                    "-Xlinker", "-soname=libstrata.so.0",
                    "-Xlinker", "--version-script=\(Context.packageDirectory)/Sources/StrataC/strata.map",
                ])
            ]),
        .executableTarget(
            name: "StrataCLI",
            dependencies: ["Strata", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Sources/StrataCLI"),
        .testTarget(name: "StrataTests", dependencies: ["Strata"], path: "Tests/StrataTests"),
    ],
    swiftLanguageModes: [.v5]
)
