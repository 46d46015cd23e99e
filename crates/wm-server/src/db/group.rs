//! Group commit for the small writes many requests make at once (a platform webhook kept,
//! an `Idempotency-Key` taken or answered): one write transaction each would queue them all
//! at the database's one writer. A request queues its item; whoever then holds the turn
//! writes every item queued so far in one transaction and tells each request its own
//! result. No request hears of its item before the transaction that wrote it committed. The
//! write runs in a task of its own, so a request that goes away mid-write (its caller hung
//! up) does not abandon the others' items; and there is no background task, so an app that
//! mounts the routes without the workers gets the same.

use std::future::Future;
use std::sync::Mutex;

use tokio::sync::oneshot;

/// The most items one transaction writes (the rest wait for the next turn).
const MOST: usize = 500;

type Waiting<I, R> = (I, oneshot::Sender<Result<R, String>>);

/// A queue of items of type `I` whose writes answer `R` each.
pub struct Group<I, R> {
    queue: Mutex<Vec<Waiting<I, R>>>,
    turn: tokio::sync::Mutex<()>,
}

impl<I, R> Default for Group<I, R> {
    fn default() -> Self {
        Group {
            queue: Mutex::new(Vec::new()),
            turn: tokio::sync::Mutex::new(()),
        }
    }
}

impl<I: Send + 'static, R: Send + 'static> Group<I, R> {
    /// Writes `item` with whatever else is queued: `write` takes the items of one turn and
    /// returns their results in the same order, all from one transaction it commits (or an
    /// error for all of them).
    pub async fn run<W, Fut>(&self, item: I, write: W) -> Result<R, String>
    where
        W: Fn(Vec<I>) -> Fut,
        Fut: Future<Output = Result<Vec<R>, String>> + Send + 'static,
    {
        let (tx, mut told) = oneshot::channel();
        self.lock_queue().push((item, tx));
        loop {
            let turn = self.turn.lock().await;
            match told.try_recv() {
                Ok(result) => return result,
                Err(oneshot::error::TryRecvError::Closed) => {
                    return Err("the write was abandoned".to_owned());
                }
                Err(oneshot::error::TryRecvError::Empty) => {}
            }
            let taken: Vec<Waiting<I, R>> = {
                let mut queue = self.lock_queue();
                let n = queue.len().min(MOST);
                queue.drain(..n).collect()
            };
            if !taken.is_empty() {
                let (items, waiting): (Vec<I>, Vec<_>) = taken.into_iter().unzip();
                let written = write(items);
                let _ = tokio::spawn(async move {
                    match written.await {
                        Ok(results) => {
                            for (tx, r) in waiting.into_iter().zip(results) {
                                let _ = tx.send(Ok(r));
                            }
                        }
                        Err(e) => {
                            for tx in waiting {
                                let _ = tx.send(Err(e.clone()));
                            }
                        }
                    }
                })
                .await;
            }
            drop(turn);
        }
    }

    fn lock_queue(&self) -> std::sync::MutexGuard<'_, Vec<Waiting<I, R>>> {
        self.queue
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
