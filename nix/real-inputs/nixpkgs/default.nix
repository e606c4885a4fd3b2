# `import nixpkgs { system; overlays; }` for the real-input evaluation: the real lib (./lib),
# a package set whose every package is a trivial derivation. Every top-level attribute name is
# one nixpkgs has (listed in ../nixpkgs-attributes.txt; the test compares the two), so a
# package the flake, crane or rust-overlay asks for under a wrong name fails evaluation here
# (`lib.callPackageWith` names the missing argument).
{
  system ? builtins.currentSystem,
  overlays ? [ ],
  config ? { },
  ...
}:
let
  lib = import ./lib;
  platform = lib.systems.elaborate system;

  stubDrv = name: stubDrvWith name { };
  stubDrvWith =
    name: env:
    derivation (
      env
      // {
        inherit name system;
        builder = "/bin/sh";
        args = [
          "-c"
          "echo ${name} > $out"
        ];
      }
    );

  # What a real mkDerivation puts into the derivation's environment: every attribute but the
  # ones it consumes itself. Keeping them forces them when the .drv is written, as the real
  # thing would (the crane sources, the vendored crates, the toolchain, the inputs).
  envOf =
    args:
    lib.filterAttrs (
      n: v:
      !(builtins.elem n [
        "passthru"
        "meta"
        "name"
        "outputs"
        "env"
        "__structuredAttrs"
      ])
      && !builtins.isFunction v
      && (!builtins.isAttrs v || v ? outPath)
    ) args;

  # Takes what mkDerivation takes (an attribute set or a fixed-point function) and keeps the
  # attributes callers read back (passthru, meta, name parts); builds nothing.
  mkDerivation =
    argsOrFun:
    let
      args = if builtins.isFunction argsOrFun then lib.fix argsOrFun else argsOrFun;
      name = args.name or "${args.pname}-${args.version}";
      drv = stubDrvWith (lib.strings.sanitizeDerivationName name) (envOf args);
    in
    drv
    // (args.passthru or { })
    // {
        inherit name;
        meta = args.meta or { };
        # f is `prev: { … }` or `final: prev: { … }`.
        overrideAttrs =
          f:
          let
            r = f args;
          in
          mkDerivation (args // (if builtins.isFunction r then r args else r));
      }
      // lib.optionalAttrs (args ? pname) { inherit (args) pname; }
      // lib.optionalAttrs (args ? version) { inherit (args) version; };

    stdenvFor = {
      inherit mkDerivation;
      hostPlatform = platform;
      buildPlatform = platform;
      targetPlatform = platform;
      isLinux = platform.isLinux;
      isDarwin = platform.isDarwin;
      shell = "/bin/sh";
      cc = stubDrv "cc";
    };

    pkg = final: name: final.callPackage ({ }: stubDrv name) { };

    # Packages: each a trivial derivation under its nixpkgs name.
    packageNames = [
      "actionlint"
      "autoPatchelfHook"
      "bash"
      "bintools"
      "cargo-llvm-cov"
      "cargo-nextest"
      "curl"
      "distribution"
      "git"
      "gnutar"
      "lndir"
      "nixfmt"
      "pkg-config"
      "rsync"
      "rustc"
      "shellcheck"
      "skopeo"
      "writableTmpDirAsHomeHook"
      "zizmor"
      "zlib"
      "zstd"
    ];

    base =
      final:
      lib.genAttrs packageNames (pkg final)
      // {
      inherit lib system config;
      pkgs = final;
      stdenv = stdenvFor;
      stdenvNoCC = stdenvFor;
      inherit (stdenvFor) hostPlatform buildPlatform targetPlatform;

      # One package set for every build/host/target combination (no cross compilation here).
      buildPackages = final;
      pkgsBuildBuild = final;
      pkgsBuildHost = final;
      pkgsBuildTarget = final;
      pkgsHostHost = final;
      pkgsHostTarget = final;
      pkgsTargetTarget = final;
      targetPackages = final;
      __splicedPackages = final;

      callPackage = lib.callPackageWith final;
      newScope = extra: lib.callPackageWith (final // extra);
      # Without cross compilation a spliced package is the host-target one.
      splicePackages = { pkgsHostTarget, ... }: pkgsHostTarget;
      makeScopeWithSplicing' = lib.makeScopeWithSplicing' {
        inherit (final) splicePackages newScope;
      };

      # The trivial builders, with the attributes nixpkgs' take, all through mkDerivation so
      # their scripts and inputs are forced like the real ones.
      writeTextFile = args: mkDerivation (args // { passAsFile = [ "text" ]; });
      writeText =
        name: text:
        final.writeTextFile {
          inherit name text;
        };
      writeShellScript = name: text: final.writeText name text;
      writeShellScriptBin = name: text: final.writeText name text;
      writeShellApplication =
        { name, text, ... }@args:
        final.writeText name (text + toString (args.runtimeInputs or [ ]));
      runCommandWith =
        { name, derivationArgs ? { }, ... }:
        buildCommand:
        mkDerivation (derivationArgs // { inherit name buildCommand; });
      runCommand = name: env: final.runCommandWith { inherit name; derivationArgs = env; };
      runCommandLocal = final.runCommand;
      runCommandCC = final.runCommand;
      symlinkJoin = { name, paths, ... }@args: mkDerivation (removeAttrs args [ "paths" ] // { paths = toString paths; });
      linkFarm =
        name: entries:
        mkDerivation {
          inherit name;
          entries = builtins.toJSON entries;
        };
      linkFarmFromDrvs = name: drvs: final.linkFarm name (map (d: { name = d.name; path = d; }) drvs);
      makeSetupHook =
        { name, ... }@args:
        script:
        mkDerivation (removeAttrs args [ "substitutions" ] // { inherit script; });
      makeWrapper = stubDrv "make-wrapper";
      rustPlatform.buildRustPackage = mkDerivation;
      fetchurl =
        { url ? builtins.head urls, urls ? [ ], name ? baseNameOf url, ... }@args:
        mkDerivation (removeAttrs args [ "urls" ] // { name = lib.strings.sanitizeDerivationName name; inherit url; });
      fetchzip = { name ? "source", ... }@args: final.fetchurl (args // { inherit name; });
      mkShell =
        {
          name ? "nix-shell",
          packages ? [ ],
          inputsFrom ? [ ],
          nativeBuildInputs ? [ ],
          ...
        }@args:
        mkDerivation (
          removeAttrs args [
            "packages"
            "inputsFrom"
          ]
          // {
            inherit name;
            nativeBuildInputs =
              packages ++ nativeBuildInputs ++ builtins.concatMap (d: d.nativeBuildInputs or [ ]) inputsFrom;
          }
        );

      # nixpkgs' own source tree: rust-overlay reads build-support scripts from it (placeholders
      # under ./pkgs, written for this stand-in).
      path = ./.;
      # gcc's run-time libraries are its `lib` output.
      gccForLibs = stubDrvWith "gcc" {
        outputs = [
          "out"
          "lib"
        ];
      };
    };
in
lib.fix (lib.foldl' (f: overlay: lib.extends overlay f) base overlays)
