pkgs:
let
  inherit (pkgs.infxStub) stubDrv;
  mkLib =
    toolchain:
    let
      need =
        what: args: attr:
        if args ? ${attr} then true else throw "crane stub: ${what} needs `${attr}`";
      # Like crane: the source must carry Cargo.toml and Cargo.lock (dependencies are vendored
      # from the lockfile).
      checkSrc =
        what: src:
        assert builtins.pathExists (src + "/Cargo.toml") || throw "crane stub: ${what}: src has no Cargo.toml";
        assert builtins.pathExists (src + "/Cargo.lock") || throw "crane stub: ${what}: src has no Cargo.lock";
        true;
      build =
        what: required: args:
        assert builtins.all (need what args) ([ "src" ] ++ required);
        assert checkSrc what args.src;
        stubDrv "${args.pname or "crate"}-${what}" {
          nativeBuildInputs = [ toolchain ] ++ args.nativeBuildInputs or [ ];
        }
        // {
          meta = args.meta or { };
        };
    in
    {
      overrideToolchain = t: mkLib (if builtins.isFunction t then t pkgs else t);
      cleanCargoSource = src: src;
      fileset = {
        commonCargoSources = path: path;
        cargoTomlAndLock = path: path;
      };
      crateNameFromCargoToml =
        { cargoToml, ... }:
        let
          t = builtins.fromTOML (builtins.readFile cargoToml);
        in
        {
          pname = t.package.name;
          version = t.package.version or "0.0.0";
        };
      buildDepsOnly = build "deps" [ ];
      buildPackage = build "package" [ "cargoArtifacts" ];
      cargoClippy = build "clippy" [ "cargoArtifacts" ];
      cargoNextest = build "nextest" [ "cargoArtifacts" ];
      cargoDoc = build "doc" [ "cargoArtifacts" ];
      cargoFmt = build "fmt" [ ];
      devShell =
        {
          checks ? { },
          inputsFrom ? [ ],
          packages ? [ ],
          ...
        }@args:
        pkgs.mkShell (
          removeAttrs args [ "checks" ]
          // {
            inputsFrom = builtins.attrValues checks ++ inputsFrom;
            packages = [ toolchain ] ++ packages;
          }
        );
    };
in
mkLib (stubDrv "rust-default" { })
