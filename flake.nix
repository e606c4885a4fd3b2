{
  description = "infx: validate an InferenceX-style benchmark repository with one command (cargo xtask validate)";

  # Three inputs, all pinned by flake.lock. crane has no inputs of its own; rust-overlay
  # follows our nixpkgs so there is one nixpkgs in the closure. nix/stubs/ holds one small
  # local stand-in per input (same names) for the offline structure test in `cargo xtask test`.
  inputs = {
    nixpkgs.url = "github:NixOS/nixpkgs/nixpkgs-unstable";
    crane.url = "github:ipetkov/crane";
    rust-overlay = {
      url = "github:oxalica/rust-overlay";
      inputs.nixpkgs.follows = "nixpkgs";
    };
  };

  outputs =
    {
      self,
      nixpkgs,
      crane,
      rust-overlay,
    }:
    let
      inherit (nixpkgs) lib;
      systems = [
        "x86_64-linux"
        "aarch64-linux"
      ];
      forAllSystems = f: lib.genAttrs systems (system: f (perSystem system));

      perSystem =
        system:
        let
          pkgs = import nixpkgs {
            inherit system;
            overlays = [ rust-overlay.overlays.default ];
          };
          # One toolchain for rustup users and Nix alike: rust-toolchain.toml.
          craneLib = (crane.mkLib pkgs).overrideToolchain (
            p: p.rust-bin.fromRustupToolchainFile ./rust-toolchain.toml
          );

          workspace = builtins.fromTOML (builtins.readFile ./Cargo.toml);

          # Cargo sources plus every non-Rust file the tests read at run time: insta snapshots
          # and fixtures under crates/, xtask/ and xtask-dev/, the bundled benchmark tree, CODEOWNERS, and
          # flake.nix, flake.lock and nix/ (xtask's tests of the offline flake harness copy
          # them), and fuzz/ (the fuzz corpus replay reads fuzz/seeds/ and fuzz/artifacts/;
          # commonCargoSources already brings its .rs and Cargo files), and scripts/ (the module graph
          # test runs scripts/module-graph.py). Without them the tests would pass locally and fail (or skip) under Nix;
          # `cargo xtask test` checks this list against the tracked files (docs/nix-and-ci.md).
          src = lib.fileset.toSource {
            root = ./.;
            fileset = lib.fileset.unions [
              (craneLib.fileset.commonCargoSources ./.)
              ./.cargo/config.toml
              ./rust-toolchain.toml
              ./crates
              ./xtask
              ./xtask-dev
              ./inferencex-e2e
              ./.github
              ./flake.nix
              ./flake.lock
              ./nix
              ./fuzz
              ./scripts
            ];
          };

          commonArgs = {
            inherit src;
            pname = "infx";
            inherit (workspace.workspace.package) version;
            strictDeps = true;
            # libgit2-sys and libz-sys build their bundled C sources unless pkg-config finds a
            # matching system library; zlib from nixpkgs is the usual match.
            nativeBuildInputs = [ pkgs.pkg-config ];
            buildInputs = [ pkgs.zlib ];
          };

          # Dependencies only, vendored from Cargo.lock (each crate fetched by its lockfile
          # checksum; the build sandbox has no network), built once and reused by every check.
          cargoArtifacts = craneLib.buildDepsOnly commonArgs;

          # The registry server for the image tests. Debian calls the binary docker-registry,
          # nixpkgs' distribution package calls it registry; the wrapper gives both the same name.
          registry = pkgs.writeShellScriptBin "docker-registry" ''
            exec ${pkgs.distribution}/bin/registry "$@"
          '';

          xtask = craneLib.buildPackage (
            commonArgs
            // {
              inherit cargoArtifacts;
              cargoExtraArgs = "--locked --package xtask";
              # Tests run once, in the nextest check.
              doCheck = false;
              meta.mainProgram = "xtask";
            }
          );
        in
        {
          inherit
            system
            pkgs
            craneLib
            src
            commonArgs
            cargoArtifacts
            registry
            xtask
            ;
        };
    in
    {
      packages = forAllSystems (s: {
        default = s.xtask;
        xtask = s.xtask;
      });

      apps = forAllSystems (s: {
        default = {
          type = "app";
          program = "${s.xtask}/bin/xtask";
          meta.description = "cargo xtask without cargo: validate, matrix, dry-run, changelog, …";
        };
      });

      checks = forAllSystems (
        s:
        let
          inherit (s)
            pkgs
            craneLib
            src
            commonArgs
            cargoArtifacts
            ;
        in
        {
          build = s.xtask;

          clippy = craneLib.cargoClippy (
            commonArgs
            // {
              inherit cargoArtifacts;
              cargoClippyExtraArgs = "--all-targets -- --deny warnings";
            }
          );

          fmt = craneLib.cargoFmt {
            inherit src;
            inherit (commonArgs) pname version;
          };

          # The one place the tests run. git is for the diff-check parity tests; the registry
          # and skopeo are for the image tests, which also need loopback listeners in the
          # sandbox (not yet verified on a networked Nix machine: see docs/nix-and-ci.md).
          # ../shared/corpus is not part of the repository, so corpus tests print SKIP here.
          tests = craneLib.cargoNextest (
            commonArgs
            // {
              inherit cargoArtifacts;
              nativeBuildInputs = commonArgs.nativeBuildInputs ++ [
                pkgs.git
                s.registry
                pkgs.skopeo
              ];
              cargoNextestExtraArgs = "--workspace --no-fail-fast";
            }
          );

          # The main job over the bundled tree, inside the build sandbox (no network at all).
          validate-hermetic =
            pkgs.runCommand "infx-validate-hermetic"
              { }
              # The binary by store path, not as an input: the dev shell takes the inputs of
              # every check and must not have to build the workspace first.
              ''
                ${s.xtask}/bin/xtask validate --hermetic --all --root ${src}/inferencex-e2e
                touch $out
              '';
        }
      );

      devShells = forAllSystems (s: {
        # Inherits the inputs of every check (same toolchain as `nix flake check`), plus the
        # tools `cargo xtask test` drives.
        default = s.craneLib.devShell {
          checks = self.checks.${s.system};
          packages = [
            s.pkgs.git
            s.pkgs.cargo-nextest
            s.registry
            s.pkgs.skopeo
            s.pkgs.actionlint
            s.pkgs.shellcheck
            s.pkgs.zizmor
          ];
        };
      });

      formatter = forAllSystems (s: s.pkgs.nixfmt);
    };
}
