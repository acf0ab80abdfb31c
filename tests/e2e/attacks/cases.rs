use super::*;

/// The kinds of object an ID argument names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Obj {
    /// A submitted project (public in the gallery, but not its organizers' to change).
    Project,
    /// A draft project (visible to its team and organizers only).
    Draft,
    Team,
    Track,
    /// A judge's membership.
    Judge,
    Assignment,
    Comment,
    Prize,
    Invitation,
    Webhook,
    Delivery,
    Run,
    Job,
    ApiToken,
}

/// How a case is sent and what a refusal looks like.
#[derive(Clone, Copy)]
pub(super) enum Via {
    /// A mutation: an error, this field null.
    Mutation(&'static str),
    /// A query: an error, or null / an empty list at this pointer under `data`.
    Query(&'static str),
    /// A subscription on a websocket: an error.
    Subscription,
}

/// One ID argument of the schema, called by members of event A with an object of another
/// event.
pub(super) struct Case {
    /// `Type.field(argument)`, or `Type.field(argument.inputField)`, as in the SDL.
    pub(super) site: &'static str,
    pub(super) obj: Obj,
    pub(super) via: Via,
    /// For an argument that refers to a second object beside the one the operation acts on
    /// (a track, a judge, a run): BAD_USER_INPUT naming one of these also counts as a
    /// refusal, the answer the project gives for a reference that is not the event's.
    pub(super) reference: &'static [&'static str],
    pub(super) query: &'static str,
    /// The variables, given the world and the foreign id.
    pub(super) vars: fn(&World, &str) -> Value,
}

/// Event A with its members (the callers) and objects to pair with foreign ones, and
/// event C (imported, judged, with something of every kind) whose objects they aim at.
pub(super) struct World {
    pub(super) a: crate::harness::Scenario,
    /// Judge A's membership in A.
    pub(super) a_judge: String,
    /// A prize of A.
    pub(super) a_prize: String,
    /// Signed up and registered in A, in no team.
    pub(super) newcomer: String,
    /// A member of C's team.
    pub(super) c_member: String,
    /// Each kind of object of event C: (public id, external id if it has one).
    pub(super) c: BTreeMap<Obj, (String, Option<String>)>,
}

impl World {
    pub(super) fn e(&self) -> &str {
        &self.a.event_a
    }
}

pub(super) fn cases() -> Vec<Case> {
    use Obj::*;
    use Via::*;
    const NONE: &[&str] = &[];
    vec![
        Case {
            site: "Query.project(id)",
            obj: Draft,
            via: Query("/project"),
            reference: NONE,
            query: "query($id: ID!) { project(id: $id) { id title } }",
            vars: |_, id| json!({ "id": id }),
        },
        Case {
            site: "Event.calibrationRun(id)",
            obj: Run,
            via: Query("/event/calibrationRun"),
            reference: NONE,
            query: "query($e: String!, $id: ID!) { event(slug: $e) { calibrationRun(id: $id) { id inputsHash } } }",
            vars: |w, id| json!({ "e": w.e(), "id": id }),
        },
        Case {
            site: "PublishedResults.inclusionProof(project)",
            obj: Project,
            via: Query("/event/results/inclusionProof"),
            reference: NONE,
            query: "query($e: String!, $p: ID!) { event(slug: $e) { results { inclusionProof(project: $p) { leafIndex root entry } } } }",
            vars: |w, id| json!({ "e": w.e(), "p": id }),
        },
        Case {
            site: "Event.calibrationJob(id)",
            obj: Job,
            via: Query("/event/calibrationJob"),
            reference: NONE,
            query: "query($e: String!, $id: ID!) { event(slug: $e) { calibrationJob(id: $id) { id state } } }",
            vars: |w, id| json!({ "e": w.e(), "id": id }),
        },
        Case {
            site: "Event.projects(track)",
            obj: Track,
            via: Query("/event/projects"),
            reference: &["track"],
            query: "query($e: String!, $t: ID) { event(slug: $e) { projects(track: $t, first: 10) { totalCount edges { node { id title } } } } }",
            vars: |w, id| json!({ "e": w.e(), "t": id }),
        },
        Case {
            site: "Subscription.calibrationJob(job)",
            obj: Job,
            via: Subscription,
            reference: NONE,
            query: "subscription($e: String!, $j: ID!) { calibrationJob(event: $e, job: $j) { id state } }",
            vars: |w, id| json!({ "e": w.e(), "j": id }),
        },
        Case {
            site: "Mutation.addTeamMember(team)",
            obj: Team,
            via: Mutation("addTeamMember"),
            reference: NONE,
            query: "mutation($t: ID!, $m: String!) { addTeamMember(team: $t, email: $m) { id } }",
            vars: |w, id| json!({ "t": id, "m": w.newcomer }),
        },
        Case {
            site: "Mutation.assignJudge(judge)",
            obj: Judge,
            via: Mutation("assignJudge"),
            reference: &["judge"],
            query: "mutation($e: String!, $j: ID!, $p: ID!) { assignJudge(event: $e, judge: $j, project: $p) { id } }",
            vars: |w, id| json!({ "e": w.e(), "j": id, "p": w.a.submitted }),
        },
        Case {
            site: "Mutation.assignJudge(project)",
            obj: Project,
            via: Mutation("assignJudge"),
            reference: &["project"],
            query: "mutation($e: String!, $j: ID!, $p: ID!) { assignJudge(event: $e, judge: $j, project: $p) { id } }",
            vars: |w, id| json!({ "e": w.e(), "j": w.a_judge, "p": id }),
        },
        Case {
            site: "Mutation.assignPrize(id)",
            obj: Prize,
            via: Mutation("assignPrize"),
            reference: NONE,
            query: "mutation($id: ID!, $p: ID) { assignPrize(id: $id, project: $p) { id } }",
            vars: |w, id| json!({ "id": id, "p": w.a.submitted }),
        },
        Case {
            site: "Mutation.assignPrize(project)",
            obj: Project,
            via: Mutation("assignPrize"),
            reference: &["project"],
            query: "mutation($id: ID!, $p: ID) { assignPrize(id: $id, project: $p) { id } }",
            vars: |w, id| json!({ "id": w.a_prize, "p": id }),
        },
        Case {
            site: "Mutation.castVotes(votes.project)",
            obj: Project,
            via: Mutation("castVotes"),
            reference: &["project", "votes"],
            query: "mutation($e: String!, $p: ID!) { castVotes(event: $e, votes: [{ project: $p, votes: 1 }]) { spent } }",
            vars: |w, id| json!({ "e": w.e(), "p": id }),
        },
        Case {
            site: "Mutation.changeProjectTrack(id)",
            obj: Project,
            via: Mutation("changeProjectTrack"),
            reference: NONE,
            query: "mutation($id: ID!, $t: ID!) { changeProjectTrack(id: $id, track: $t, reason: \"attack\") { id } }",
            vars: |w, id| json!({ "id": id, "t": w.a.track_a }),
        },
        Case {
            site: "Mutation.changeProjectTrack(track)",
            obj: Track,
            via: Mutation("changeProjectTrack"),
            reference: &["track"],
            query: "mutation($id: ID!, $t: ID!) { changeProjectTrack(id: $id, track: $t, reason: \"attack\") { id } }",
            vars: |w, id| json!({ "id": w.a.submitted, "t": id }),
        },
        Case {
            site: "Mutation.deleteTrack(id)",
            obj: Track,
            via: Mutation("deleteTrack"),
            reference: NONE,
            query: "mutation($id: ID!) { deleteTrack(id: $id) }",
            vars: |_, id| json!({ "id": id }),
        },
        Case {
            site: "Mutation.clearDuplicate(id)",
            obj: Project,
            via: Mutation("clearDuplicate"),
            reference: NONE,
            query: "mutation($id: ID!) { clearDuplicate(id: $id) { id } }",
            vars: |_, id| json!({ "id": id }),
        },
        Case {
            site: "Mutation.createPrize(input.track)",
            obj: Track,
            via: Mutation("createPrize"),
            reference: &["track"],
            query: "mutation($e: String!, $t: ID) { createPrize(event: $e, input: { name: \"Attack\", position: 2, track: $t }) { id } }",
            vars: |w, id| json!({ "e": w.e(), "t": id }),
        },
        Case {
            site: "Mutation.createProject(input.track)",
            obj: Track,
            via: Mutation("createProject"),
            reference: &["track"],
            query: "mutation($e: String!, $t: ID) { createProject(event: $e, input: { title: \"Attack\", track: $t }) { id } }",
            vars: |w, id| json!({ "e": w.e(), "t": id }),
        },
        Case {
            site: "Mutation.disqualifyProject(id)",
            obj: Project,
            via: Mutation("disqualifyProject"),
            reference: NONE,
            query: "mutation($id: ID!) { disqualifyProject(id: $id, reason: \"attack\") { id } }",
            vars: |_, id| json!({ "id": id }),
        },
        Case {
            site: "Mutation.grantRole(tracks)",
            obj: Track,
            via: Mutation("grantRole"),
            reference: &["track"],
            query: "mutation($e: String!, $m: String!, $t: ID!) { grantRole(event: $e, email: $m, role: JUDGE, tracks: [$t]) { id } }",
            vars: |w, id| json!({ "e": w.e(), "m": w.newcomer, "t": id }),
        },
        Case {
            site: "Mutation.hideComment(id)",
            obj: Comment,
            via: Mutation("hideComment"),
            reference: NONE,
            query: "mutation($id: ID!) { hideComment(id: $id, reason: \"attack\") { id } }",
            vars: |_, id| json!({ "id": id }),
        },
        Case {
            site: "Mutation.hideProject(id)",
            obj: Project,
            via: Mutation("hideProject"),
            reference: NONE,
            query: "mutation($id: ID!) { hideProject(id: $id, reason: \"attack\") { id } }",
            vars: |_, id| json!({ "id": id }),
        },
        Case {
            site: "Mutation.inviteToTeam(team)",
            obj: Team,
            via: Mutation("inviteToTeam"),
            reference: NONE,
            query: "mutation($t: ID!, $m: String!) { inviteToTeam(team: $t, email: $m) { link } }",
            vars: |w, id| json!({ "t": id, "m": w.newcomer }),
        },
        Case {
            site: "Mutation.leaveTeam(team)",
            obj: Team,
            via: Mutation("leaveTeam"),
            reference: NONE,
            query: "mutation($t: ID!) { leaveTeam(team: $t) { id } }",
            vars: |_, id| json!({ "t": id }),
        },
        Case {
            site: "Mutation.markDuplicate(id)",
            obj: Project,
            via: Mutation("markDuplicate"),
            reference: NONE,
            query: "mutation($id: ID!, $of: ID!) { markDuplicate(id: $id, of: $of) { id } }",
            vars: |w, id| json!({ "id": id, "of": w.a.submitted }),
        },
        Case {
            site: "Mutation.markDuplicate(of)",
            obj: Project,
            via: Mutation("markDuplicate"),
            reference: &["of"],
            query: "mutation($id: ID!, $of: ID!) { markDuplicate(id: $id, of: $of) { id } }",
            vars: |w, id| json!({ "id": w.a.submitted, "of": id }),
        },
        Case {
            site: "Mutation.postComment(project)",
            obj: Draft,
            via: Mutation("postComment"),
            reference: NONE,
            query: "mutation($p: ID!) { postComment(project: $p, body: \"attack\") { id } }",
            vars: |_, id| json!({ "p": id }),
        },
        Case {
            site: "Mutation.publishResults(run)",
            obj: Run,
            via: Mutation("publishResults"),
            reference: &["run"],
            query: "mutation($e: String!, $r: ID!) { publishResults(event: $e, run: $r) { version } }",
            vars: |w, id| json!({ "e": w.e(), "r": id }),
        },
        Case {
            site: "Mutation.issueJudgeSignIn(judge)",
            obj: Judge,
            via: Mutation("issueJudgeSignIn"),
            reference: &["judge"],
            query: "mutation($e: String!, $j: ID!) { issueJudgeSignIn(event: $e, judge: $j) { link code } }",
            vars: |w, id| json!({ "e": w.e(), "j": id }),
        },
        Case {
            site: "Mutation.revokeJudgeSignIn(judge)",
            obj: Judge,
            via: Mutation("revokeJudgeSignIn"),
            reference: &["judge"],
            query: "mutation($e: String!, $j: ID!) { revokeJudgeSignIn(event: $e, judge: $j) { id } }",
            vars: |w, id| json!({ "e": w.e(), "j": id }),
        },
        Case {
            site: "Mutation.recuseJudge(judge)",
            obj: Judge,
            via: Mutation("recuseJudge"),
            reference: &["judge"],
            query: "mutation($e: String!, $j: ID!, $t: ID!) { recuseJudge(event: $e, judge: $j, team: $t, reason: \"attack\") { id } }",
            vars: |w, id| json!({ "e": w.e(), "j": id, "t": w.a.team_a }),
        },
        Case {
            site: "Mutation.recuseJudge(team)",
            obj: Team,
            via: Mutation("recuseJudge"),
            reference: &["team"],
            query: "mutation($e: String!, $j: ID!, $t: ID!) { recuseJudge(event: $e, judge: $j, team: $t, reason: \"attack\") { id } }",
            vars: |w, id| json!({ "e": w.e(), "j": w.a_judge, "t": id }),
        },
        Case {
            site: "Mutation.removeTeamMember(team)",
            obj: Team,
            via: Mutation("removeTeamMember"),
            reference: NONE,
            query: "mutation($t: ID!, $m: String!) { removeTeamMember(team: $t, email: $m, reason: \"attack\") { id } }",
            vars: |w, id| json!({ "t": id, "m": w.c_member }),
        },
        Case {
            site: "Mutation.renameTeam(team)",
            obj: Team,
            via: Mutation("renameTeam"),
            reference: NONE,
            query: "mutation($t: ID!) { renameTeam(team: $t, name: \"Pwned\", reason: \"attack\") { id } }",
            vars: |_, id| json!({ "t": id }),
        },
        Case {
            site: "Mutation.requalifyProject(id)",
            obj: Project,
            via: Mutation("requalifyProject"),
            reference: NONE,
            query: "mutation($id: ID!) { requalifyProject(id: $id) { id } }",
            vars: |_, id| json!({ "id": id }),
        },
        Case {
            site: "Mutation.resendInvitation(id)",
            obj: Invitation,
            via: Mutation("resendInvitation"),
            reference: NONE,
            query: "mutation($id: ID!) { resendInvitation(id: $id) { id } }",
            vars: |_, id| json!({ "id": id }),
        },
        Case {
            site: "Mutation.retryWebhookDelivery(id)",
            obj: Delivery,
            via: Mutation("retryWebhookDelivery"),
            reference: NONE,
            query: "mutation($id: ID!) { retryWebhookDelivery(id: $id) { id } }",
            vars: |_, id| json!({ "id": id }),
        },
        Case {
            site: "Mutation.revokeApiToken(id)",
            obj: ApiToken,
            via: Mutation("revokeApiToken"),
            reference: NONE,
            query: "mutation($id: ID!) { revokeApiToken(id: $id) { id } }",
            vars: |_, id| json!({ "id": id }),
        },
        Case {
            site: "Mutation.revokeInvitation(id)",
            obj: Invitation,
            via: Mutation("revokeInvitation"),
            reference: NONE,
            query: "mutation($id: ID!) { revokeInvitation(id: $id) { id } }",
            vars: |_, id| json!({ "id": id }),
        },
        Case {
            site: "Mutation.rotateInviteCode(team)",
            obj: Team,
            via: Mutation("rotateInviteCode"),
            reference: NONE,
            query: "mutation($t: ID!) { rotateInviteCode(team: $t) { id inviteCode } }",
            vars: |_, id| json!({ "t": id }),
        },
        Case {
            site: "Mutation.renameTrack(id)",
            obj: Track,
            via: Mutation("renameTrack"),
            reference: NONE,
            query: "mutation($id: ID!) { renameTrack(id: $id, name: \"attack\") { id } }",
            vars: |_, id| json!({ "id": id }),
        },
        Case {
            site: "Mutation.setJudgingMode(track)",
            obj: Track,
            via: Mutation("setJudgingMode"),
            reference: &["track"],
            query: "mutation($e: String!, $t: ID) { setJudgingMode(event: $e, mode: PAIRWISE, track: $t) { id } }",
            vars: |w, id| json!({ "e": w.e(), "t": id }),
        },
        Case {
            site: "Event.myNextComparison(seen)",
            obj: Project,
            via: Query("/event/myNextComparison"),
            reference: &["seen"],
            query: "query($e: String!, $p: ID) { event(slug: $e) { myNextComparison(seen: $p) { previous { id } current { id } } } }",
            vars: |w, id| json!({ "e": w.e(), "p": id }),
        },
        Case {
            site: "Mutation.compareProjects(better)",
            obj: Project,
            via: Mutation("compareProjects"),
            reference: &["better"],
            query: "mutation($e: String!, $b: ID!, $w: ID!) { compareProjects(event: $e, better: $b, worse: $w) { id } }",
            vars: |w, id| json!({ "e": w.e(), "b": id, "w": w.a.submitted }),
        },
        Case {
            site: "Mutation.compareProjects(worse)",
            obj: Project,
            via: Mutation("compareProjects"),
            reference: &["worse"],
            query: "mutation($e: String!, $b: ID!, $w: ID!) { compareProjects(event: $e, better: $b, worse: $w) { id } }",
            vars: |w, id| json!({ "e": w.e(), "b": w.a.submitted, "w": id }),
        },
        Case {
            site: "Mutation.skipComparison(project)",
            obj: Project,
            via: Mutation("skipComparison"),
            reference: &["project"],
            query: "mutation($e: String!, $p: ID!) { skipComparison(event: $e, project: $p, reason: \"attack\") { current { id } } }",
            vars: |w, id| json!({ "e": w.e(), "p": id }),
        },
        Case {
            site: "Mutation.saveReview(assignment)",
            obj: Assignment,
            via: Mutation("saveReview"),
            reference: NONE,
            query: "mutation($a: ID!) { saveReview(assignment: $a, scores: [{ criterion: \"impact\", value: 3 }], comment: \"attack\") { id } }",
            vars: |_, id| json!({ "a": id }),
        },
        Case {
            site: "Mutation.setProjectTable(project)",
            obj: Project,
            via: Mutation("setProjectTable"),
            reference: NONE,
            query: "mutation($p: ID!) { setProjectTable(project: $p, table: \"99\") { id } }",
            vars: |_, id| json!({ "p": id }),
        },
        Case {
            site: "Mutation.setWebhookActive(id)",
            obj: Webhook,
            via: Mutation("setWebhookActive"),
            reference: NONE,
            query: "mutation($id: ID!) { setWebhookActive(id: $id, active: false) { id } }",
            vars: |_, id| json!({ "id": id }),
        },
        Case {
            site: "Mutation.submitProject(id)",
            obj: Draft,
            via: Mutation("submitProject"),
            reference: NONE,
            query: "mutation($id: ID!) { submitProject(id: $id) { id } }",
            vars: |_, id| json!({ "id": id }),
        },
        Case {
            site: "Mutation.unassignJudge(assignment)",
            obj: Assignment,
            via: Mutation("unassignJudge"),
            reference: NONE,
            query: "mutation($a: ID!) { unassignJudge(assignment: $a) }",
            vars: |_, id| json!({ "a": id }),
        },
        Case {
            site: "Mutation.unhideProject(id)",
            obj: Project,
            via: Mutation("unhideProject"),
            reference: NONE,
            query: "mutation($id: ID!) { unhideProject(id: $id) { id } }",
            vars: |_, id| json!({ "id": id }),
        },
        Case {
            site: "Mutation.updateProject(id)",
            obj: Draft,
            via: Mutation("updateProject"),
            reference: NONE,
            query: "mutation($id: ID!) { updateProject(id: $id, input: { title: \"Pwned\" }) { id } }",
            vars: |_, id| json!({ "id": id }),
        },
        Case {
            site: "Mutation.updateProject(input.track)",
            obj: Track,
            via: Mutation("updateProject"),
            reference: &["track"],
            query: "mutation($id: ID!, $t: ID) { updateProject(id: $id, input: { track: $t }) { id } }",
            vars: |w, id| json!({ "id": w.a.draft, "t": id }),
        },
        Case {
            site: "Mutation.withdrawProject(id)",
            obj: Project,
            via: Mutation("withdrawProject"),
            reference: NONE,
            query: "mutation($id: ID!) { withdrawProject(id: $id) { id } }",
            vars: |_, id| json!({ "id": id }),
        },
    ]
}

/// Every place in `schema.graphql` where a client hands the server an ID: each argument of
/// type `ID` (or a list of them) of every object type's fields, as `Type.field(arg)`, and
/// each `ID` field of an input object argument, as `Type.field(arg.field)`.
pub(super) fn id_sites() -> BTreeSet<String> {
    use apollo_compiler::Schema;
    use apollo_compiler::schema::ExtendedType;
    let schema =
        Schema::parse_and_validate(include_str!("../../../schema.graphql"), "schema.graphql")
            .unwrap_or_else(|e| panic!("schema.graphql: {}", e.errors));
    let mut sites = BTreeSet::new();
    for (type_name, ty) in &schema.types {
        let ExtendedType::Object(object) = ty else {
            continue;
        };
        for (field_name, field) in &object.fields {
            for arg in &field.arguments {
                let named = arg.ty.inner_named_type();
                if named == "ID" {
                    sites.insert(format!("{type_name}.{field_name}({})", arg.name));
                } else if let Some(ExtendedType::InputObject(input)) = schema.types.get(named) {
                    for (input_field, def) in &input.fields {
                        if def.ty.inner_named_type() == "ID" {
                            sites.insert(format!(
                                "{type_name}.{field_name}({}.{input_field})",
                                arg.name
                            ));
                        }
                    }
                }
            }
        }
    }
    sites
}
