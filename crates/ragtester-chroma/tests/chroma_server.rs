//! Chroma against the in-process dense retriever on the same vectors, over a real Chroma server from the
//! `chromadb` PyPI package (`chroma run`, on 127.0.0.1): the same top-k chunks for every query (up to ties),
//! with the per-document scope and hidden documents as metadata filters, and a second run reusing the
//! collection. The server is testkit's `ChromaServer`; the test is ignored by default (listed as such by
//! plain `cargo test`) and run by scripts/test.sh, which installs Chroma.

use ragtester_chroma::ChromaStore;
use ragtester_core::Chunk;
use ragtester_retrieve::{DenseIndex, HashEmbedder, Hit, Retriever, Scope};
use ragtester_testkit::chroma::ChromaServer;

/// Forty passages over four documents, about pumps, valves, batteries and trains.
fn chunks() -> Vec<Chunk> {
    let topics = [
        (
            "pump",
            "The pump moves water at {n} litres per minute through the outlet pipe.",
        ),
        (
            "valve",
            "The relief valve opens at {n} bar and closes again below the set pressure.",
        ),
        (
            "battery",
            "The battery keeps {n} percent of its charge after a winter in storage.",
        ),
        (
            "train",
            "The night train leaves at {n} o'clock and stops at every station on the coast.",
        ),
    ];
    let mut out = Vec::new();
    for (d, (doc, template)) in topics.iter().enumerate() {
        for i in 0..10 {
            let text = template.replace("{n}", &(i * 7 + d).to_string());
            out.push(Chunk {
                id: format!("{doc}-{i}"),
                document_id: doc.to_string(),
                start: i * 100,
                end: i * 100 + text.chars().count(),
                text,
            });
        }
    }
    out
}

/// Hits equal up to ties: the same chunks, or different ones only where their scores are equal.
fn same_up_to_ties(ours: &[Hit], theirs: &[Hit], what: &str) {
    assert_eq!(ours.len(), theirs.len(), "{what}: {ours:?} / {theirs:?}");
    for (a, b) in ours.iter().zip(theirs) {
        assert!(
            (a.score - b.score).abs() < 1e-4,
            "{what}: scores differ: {ours:?} / {theirs:?}"
        );
        if a.chunk != b.chunk {
            let tied = ours
                .iter()
                .filter(|h| (h.score - a.score).abs() < 1e-4)
                .count()
                > 1;
            assert!(tied, "{what}: {ours:?} / {theirs:?}");
        }
    }
}

#[test]
#[ignore = "needs a Chroma server: scripts/real-tools.sh installs it, scripts/test.sh runs this with it"]
fn chroma_retrieves_what_the_in_process_index_retrieves() {
    let Some(server) = ChromaServer::start() else {
        return;
    };
    let spec = server.spec();
    let chunks = chunks();
    let embedder = std::sync::Arc::new(HashEmbedder::default());
    let exact = DenseIndex::build(&chunks, embedder.clone()).unwrap();
    let chroma = ChromaStore::open(&spec, &chunks, embedder.clone(), &Default::default()).unwrap();
    assert!(!chroma.reused());
    let queries = [
        "At what pressure does the relief valve open?",
        "how much water does the pump move",
        "battery charge after winter storage",
        "when does the night train leave",
        "outlet pipe",
    ];
    for q in queries {
        same_up_to_ties(
            &exact.retrieve(q, 5, Scope::ALL).unwrap(),
            &chroma.retrieve(q, 5, Scope::ALL).unwrap(),
            q,
        );
    }
    // The paper's per-document scope, and documents hidden from everyone else, as metadata filters.
    let only = vec!["battery".to_string()];
    let scoped = chroma
        .retrieve("relief valve pressure", 3, Scope::only(&only))
        .unwrap();
    assert!(
        scoped
            .iter()
            .all(|h| chunks[h.chunk].document_id == "battery")
    );
    same_up_to_ties(
        &exact
            .retrieve("relief valve pressure", 3, Scope::only(&only))
            .unwrap(),
        &scoped,
        "scoped",
    );
    let hidden = vec!["valve".to_string()];
    let scope = Scope {
        documents: &[],
        hidden: &hidden,
    };
    let without = chroma.retrieve("relief valve pressure", 5, scope).unwrap();
    assert!(
        without
            .iter()
            .all(|h| chunks[h.chunk].document_id != "valve")
    );
    same_up_to_ties(
        &exact.retrieve("relief valve pressure", 5, scope).unwrap(),
        &without,
        "hidden",
    );
    assert!(chroma.retrieve("", 5, Scope::ALL).unwrap().is_empty());

    // The same corpus and embedder again: the collection is reused, nothing is embedded twice.
    let again = ChromaStore::open(&spec, &chunks, embedder.clone(), &Default::default()).unwrap();
    assert!(again.reused());
    assert_eq!(again.collection(), chroma.collection());
    // Another cut of the corpus is another collection.
    let fewer = ChromaStore::open(&spec, &chunks[..20], embedder, &Default::default()).unwrap();
    assert_ne!(fewer.collection(), chroma.collection());
    assert!(!fewer.reused());
}

#[test]
fn an_unreachable_server_is_a_clear_error() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let spec = format!("chroma:http://127.0.0.1:{port}");
    let err = match ChromaStore::open(
        &spec,
        &chunks(),
        std::sync::Arc::new(HashEmbedder::default()),
        &Default::default(),
    ) {
        Ok(_) => panic!("nothing listens there"),
        Err(e) => format!("{e:#}"),
    };
    assert!(err.contains("Chroma server"), "{err}");
}
