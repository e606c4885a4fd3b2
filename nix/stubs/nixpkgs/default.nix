# `import nixpkgs { system; overlays; }` for the stub: a package set with overlays applied the
# way nixpkgs applies them (lib.extends), every package a trivial derivation.
{
  system ? builtins.currentSystem,
  overlays ? [ ],
  config ? { },
}:
let
  lib = import ./lib.nix;

  # A derivation that builds instantly with /bin/sh (Debian's Nix runs with the sandbox off).
  stubDrv =
    name: extra:
    derivation (
      {
        inherit name system;
        builder = "/bin/sh";
        args = [
          "-c"
          "echo ${name} > $out"
        ];
      }
      // extra
    );

  # A script is not run here, but it must at least parse: sh -n. /bin/sh, not bash: a Nix
  # build sandbox (GitHub's runner) provides /bin/sh only.
  scriptDrv =
    name: text:
    derivation {
      inherit name system text;
      passAsFile = [ "text" ];
      builder = "/bin/sh";
      args = [
        "-c"
        ''/bin/sh -n "$textPath" && echo ${name} > "$out"''
      ];
    };

  base = final: {
    inherit lib system;
    stdenv.hostPlatform = {
      inherit system;
      isLinux = true;
      isDarwin = false;
    };

    runCommand = name: env: script: scriptDrv name script;
    writeShellScriptBin = name: text: scriptDrv name text;

    # `nix develop` needs a bash builder and an `outputs` list (its env capture loops over it):
    # it runs its bash env-capture script with the builder. The flake step runs Nix with
    # `sandbox = false` (docs/nix-and-ci.md), so the host's /bin/bash is there.
    mkShell =
      {
        name ? "nix-shell",
        packages ? [ ],
        inputsFrom ? [ ],
        nativeBuildInputs ? [ ],
        shellHook ? "",
        ...
      }:
      derivation {
        inherit name system shellHook;
        builder = "/bin/bash";
        args = [
          "-c"
          "echo ${name} > $out"
        ];
        outputs = [ "out" ];
        IN_DEV_SHELL = "1";
        nativeBuildInputs =
          packages ++ nativeBuildInputs ++ builtins.concatMap (d: d.nativeBuildInputs or [ ]) inputsFrom;
      };

    # Packages the flake names. Attribute names here are believed to match nixpkgs (see
    # docs/nix-and-ci.md: verified only on a networked machine with a current Nix).
    git = stubDrv "git" { };
    pkg-config = stubDrv "pkg-config" { };
    zlib = stubDrv "zlib" { };
    distribution = stubDrv "distribution" { };
    skopeo = stubDrv "skopeo" { };
    cargo-nextest = stubDrv "cargo-nextest" { };
    actionlint = stubDrv "actionlint" { };
    shellcheck = stubDrv "shellcheck" { };
    zizmor = stubDrv "zizmor" { };
    nixfmt = stubDrv "nixfmt" { };

    # For the other stubs (crane, rust-overlay).
    infxStub = { inherit stubDrv scriptDrv; };
  };
in
lib.fix (builtins.foldl' (f: overlay: lib.extends overlay f) base overlays)
