//! Share links: every preset and setting survives a round trip; hostile, truncated, mangled and
//! future-version links are clear errors, never panics.
#![cfg(not(target_arch = "wasm32"))]

use proptest::prelude::*;
use warpscope::figure::scene::Theme;
use warpscope::share::{decode, encode, PaneState, ShareError, ViewState, VERSION};
use warpscope::teach::presets::PRESETS;

fn view_of(p: &warpscope::teach::presets::Preset) -> ViewState {
    ViewState {
        panes: vec![PaneState::from_scenario(&p.scenario(), p.name, 0, 0)],
        step: Some(3),
        theme: Theme::Dark,
        ..ViewState::default()
    }
}

#[test]
fn every_preset_round_trips_and_runs_the_same() {
    for p in PRESETS.iter() {
        let view = view_of(p);
        let link = encode(&view);
        assert!(link.starts_with("1."), "{link}");
        assert!(link.len() < 2000, "{} makes a {}-character link", p.name, link.len());
        let back = decode(&link).unwrap_or_else(|e| panic!("{}: {e}", p.name));
        assert_eq!(back, view);
        let sc = back.panes[0].scenario().expect("valid");
        assert_eq!(sc, p.scenario(), "{}", p.name);
        assert_eq!(sc.run().expect("runs").to_text(), p.scenario().run().expect("runs").to_text());
    }
}

#[test]
fn settings_and_compare_panes_round_trip() {
    let mut a = PaneState::from_scenario(&PRESETS[0].scenario(), "coalesced", 0, 0);
    a.l1 = "off".into();
    a.strict = true;
    a.sets = vec!["base=0x1000".into(), "c[0x0][0x160]=0x7000".into()];
    let mut b = a.clone();
    b.cc = "3.5".into();
    b.bank_mode = 8;
    b.block = "32x8x1".into();
    b.instr = 2;
    b.issue = 5;
    let view =
        ViewState { panes: vec![a, b], step: None, theme: Theme::Light, all_warps: true, tile: true, projection: true };
    assert_eq!(decode(&encode(&view)), Ok(view.clone()));
    // One warp and the lane view, the defaults, are left out of the link: links made before the page could
    // share these open as they did.
    let plain = ViewState { all_warps: false, tile: false, ..view.clone() };
    let json = String::from_utf8(warpscope::share::unpack(&encode(&plain)).expect("unpacks")).expect("text");
    assert!(!json.contains("all_warps") && !json.contains("tile"), "{json}");
    assert_eq!(decode(&format!("#{}", encode(&view))), Ok(view), "a leading # is accepted");
}

#[test]
fn the_chosen_kernel_round_trips() {
    let p = warpscope::teach::presets::find("ptx-transpose-naive").expect("preset");
    let mut sc = p.scenario();
    sc.kernel = Some("_Z14transposeNaivePfS_ii".into());
    let view = ViewState {
        panes: vec![PaneState::from_scenario(&sc, "", 0, 0)],
        step: None,
        theme: Theme::Light,
        ..ViewState::default()
    };
    let back = decode(&encode(&view)).expect("decodes");
    assert_eq!(back.panes[0].scenario().expect("valid").kernel.as_deref(), Some("_Z14transposeNaivePfS_ii"));
    // A link made before kernels were stored opens the first kernel.
    let old = PaneState { kernel: String::new(), ..back.panes[0].clone() };
    assert_eq!(old.scenario().expect("valid").kernel, None);
}

#[test]
fn bad_links_say_what_is_wrong() {
    let good = encode(&ViewState::default());
    assert_eq!(decode("hello"), Err(ShareError::NoVersion));
    assert_eq!(decode(""), Err(ShareError::NoVersion));
    assert_eq!(decode(&format!("{}.{}", VERSION + 1, &good[2..])), Err(ShareError::Future(VERSION + 1)));
    assert_eq!(decode("1.abc$def"), Err(ShareError::BadCharacter(6)));
    assert!(matches!(decode(&good[..good.len() - 5]), Err(ShareError::Corrupt(_))), "truncated");
    // Issue 28: a link cut short says so in words, never the decoder's bits and symbols, whatever the cut.
    for cut in 1..good.len().min(40) {
        let e = decode(&good[..good.len() - cut]).expect_err("cut short").to_string();
        assert!(e.starts_with("this link is damaged or cut short"), "{e}");
        assert!(!e.contains("symbol") && !e.contains("0b") && !e.contains("0x"), "{e}");
    }
    assert!(matches!(decode(&"1.".repeat(40_000)), Err(ShareError::TooLong(80_000))));
    // A well-formed link whose content is impossible.
    let mut v = ViewState::default();
    v.panes[0].cc = "9.9".into();
    assert!(matches!(decode(&encode(&v)), Err(ShareError::Invalid(m)) if m.contains("unknown compute capability")));
    v.panes.clear();
    assert_eq!(decode(&encode(&v)), Err(ShareError::Invalid("0 panes (one or two)".into())));
    // A decompression bomb: 2 MB of zeros packs small but inflates past the limit.
    let bomb = miniz_oxide::deflate::compress_to_vec(&vec![b' '; 2 << 20], 9);
    use base64::Engine as _;
    let link = format!("1.{}", base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bomb));
    assert!(matches!(decode(&link), Err(ShareError::Corrupt(_))));
    // Fields added by a later release are ignored; missing ones take defaults.
    let json = br#"{"panes":[{"cc":"7.5","text":"8*lane","future_field":1}],"zoom":2}"#;
    let link = format!(
        "1.{}",
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(miniz_oxide::deflate::compress_to_vec(json, 9))
    );
    let v = decode(&link).expect("forward compatible");
    assert_eq!((v.panes[0].cc.as_str(), v.panes[0].op.as_str()), ("7.5", "LDG.E.32"));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn any_link_text_is_answered(text in "(\\PC){0,200}") {
        let _ = decode(&text);
    }

    #[test]
    fn mangled_links_never_panic(which in 0..PRESETS.len(), cut in 0usize..400, flip in 0usize..400, c in "[A-Za-z0-9_-]") {
        let mut link = encode(&view_of(&PRESETS[which]));
        if flip < link.len() && link.is_char_boundary(flip) && link.is_char_boundary(flip + 1) {
            link.replace_range(flip..flip + 1, &c);
        }
        let cut = cut.min(link.len());
        let _ = decode(&link[..cut]);
        let _ = decode(&link);
    }
}

#[test]
fn deep_or_huge_links_are_refused_in_plain_words() {
    use warpscope::share::{decode, pack, ShareError, MAX_JSON_DEPTH, MAX_STATE_BYTES};
    // A link whose `sets` nests 10,000 deep (84 characters once packed) overflowed the page's stack while it was
    // deserialised: now the bytes are checked first (MAX_JSON_DEPTH = 16; a view nests 3).
    let deep = format!("{{\"panes\":[{{\"sets\":{}{}}}]}}", "[".repeat(10_000), "]".repeat(10_000));
    let link = pack(deep.as_bytes());
    assert!(link.len() < 200, "{}", link.len());
    assert_eq!(
        decode(&link),
        Err(ShareError::Corrupt(format!(
            "its data nests more than {MAX_JSON_DEPTH} levels deep; a warpscope view nests 3"
        )))
    );
    // Brackets inside strings are text, not nesting.
    let text = format!("{{\"panes\":[{{\"text\":\"{}\"}}]}}", "[".repeat(100));
    assert!(!matches!(decode(&pack(text.as_bytes())), Err(ShareError::Corrupt(m)) if m.contains("nests")));
    // Data that unpacks past the limit says so, not the inflater's status name.
    let big = vec![b' '; MAX_STATE_BYTES + 1];
    assert_eq!(
        decode(&pack(&big)),
        Err(ShareError::Corrupt(format!(
            "it unpacks to more than {MAX_STATE_BYTES} bytes, more than any warpscope view"
        )))
    );
}

#[test]
fn compare_panes_differ_in_their_program_not_in_the_machine() {
    use warpscope::lang::Lang;
    use warpscope::scenario::{Scenario, Setting};
    let a = Scenario::default();
    // The machine settings (CC, L1, bank mode, shared model) are what a comparison varies.
    let mut b = a.clone();
    for (s, v) in
        [(Setting::Cc, "3.5"), (Setting::L1, "off"), (Setting::BankMode, "8"), (Setting::SharedModel, "documented")]
    {
        b.set(s, v).expect(v);
    }
    assert_eq!(a.program_differences(&b), vec![]);
    b.set(Setting::Pattern, "4*lane").expect("pattern");
    b.set(Setting::Block, "64").expect("block");
    assert_eq!(a.program_differences(&b), vec![Setting::Block, Setting::Pattern]);
    // The instruction field counts only where the language takes one: a CUDA kernel says its own loads.
    let mut c = a.clone();
    c.lang = Lang::Cuda;
    let mut d = c.clone();
    d.op = "LDS.32".into();
    assert_eq!(c.program_differences(&d), vec![]);
    assert_eq!(a.program_differences(&c), vec![Setting::Lang]);
}

/// Data that is no view, or a field of the wrong kind, is said in words, not as serde's message (which
/// named Rust types: "invalid type: integer `80`, expected a string", "expected struct ViewState").
#[test]
fn links_with_the_wrong_kind_of_data_say_so_in_words() {
    let words = |json: &str| match decode(&warpscope::share::pack(json.as_bytes())) {
        Err(ShareError::Corrupt(m)) => m,
        other => panic!("{json}: {other:?}"),
    };
    assert_eq!(words(r#"{"panes":[{"cc":80}]}"#), "it holds the number 80 where a warpscope view has text");
    assert_eq!(words(r#"{"theme":"purple"}"#), "it holds `purple` where a warpscope view has light or dark");
    assert_eq!(words(r#"{"step":"x"}"#), "it holds text where a warpscope view has a whole number");
    assert_eq!(words(r#"{"panes":[{"sets":[true]}]}"#), "it holds true or false where a warpscope view has text");
    assert_eq!(words(r#"{"panes":"x"}"#), "it holds text where a warpscope view has a list");
    for no_view in ["5", r#""x""#, "null", r#"{"panes":[5]}"#] {
        assert_eq!(words(no_view), "its data is not a warpscope view", "{no_view}");
    }
}
