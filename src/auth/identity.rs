//! The client identity presented to an authorization server, in the specification's order:
//! pre-registered, Client ID Metadata Document, a stored dynamic registration, a new one.
//! Dynamic registration is deprecated by the 2026-07-28 specification in favour of metadata
//! documents; it stays, as the last resort.

use super::discovery::{AuthServer, Discovery};
use super::flow::{self, ClientAuth};
use super::store::{self, Record};
use super::{AuthContext, Io};
use crate::error::{Error, Result};

impl AuthContext {
    /// Whether the configured client may be used with `issuer`: the one named by
    /// `oauth.issuer`; a public client id without it is bound to the first issuer it is used
    /// with. A secret or key without `oauth.issuer` goes nowhere (`from_json` refuses that
    /// configuration): a server could otherwise name its own authorization server and receive
    /// them.
    pub(super) fn configured_for(&self, issuer: &str) -> bool {
        let cfg = self.cfg();
        if cfg.client_id.is_none() {
            return false;
        }
        match &cfg.issuer {
            Some(i) => i == issuer,
            None if cfg.client_secret.is_some() || cfg.signer.is_some() => false,
            None => {
                let mut st = self.state.lock().unwrap();
                st.bound_issuer.get_or_insert_with(|| issuer.to_string()) == issuer
            }
        }
    }

    /// The configured client, with the authentication method forced, implied by the key or
    /// secret, or chosen from what the server supports.
    pub(super) fn configured_client(&self, server: &AuthServer) -> ClientAuth {
        let cfg = self.cfg();
        let method = cfg.token_endpoint_auth_method.clone().unwrap_or_else(|| {
            if cfg.signer.is_some() {
                "private_key_jwt".into()
            } else if cfg.client_secret.is_some() {
                let supported = server.meta.auth_methods();
                if !supported.iter().any(|m| m == "client_secret_basic")
                    && supported.iter().any(|m| m == "client_secret_post")
                {
                    "client_secret_post".into()
                } else {
                    "client_secret_basic".into()
                }
            } else {
                "none".into()
            }
        });
        ClientAuth {
            client_id: cfg.client_id.clone().unwrap_or_default(),
            secret: cfg.client_secret.clone(),
            method,
            signer: cfg.signer.clone(),
            issuer: if cfg.client_secret.is_some() || cfg.signer.is_some() {
                cfg.issuer.clone()
            } else {
                Some(server.issuer.clone())
            },
        }
    }

    pub(super) fn cimd_client(&self, server: &AuthServer) -> Option<ClientAuth> {
        let url = self.cfg().client_metadata_url.as_ref()?;
        (server.meta.client_id_metadata_document_supported == Some(true)).then(|| ClientAuth {
            client_id: url.clone(),
            secret: None,
            method: "none".into(),
            signer: None,
            issuer: None,
        })
    }

    /// A client identity usable for a refresh without registering anything.
    pub(super) fn known_client(&self, d: &Discovery, record: &Record) -> Option<ClientAuth> {
        if self.configured_for(&d.server.issuer) {
            return Some(self.configured_client(&d.server));
        }
        self.cimd_client(&d.server).or_else(|| {
            record
                .client
                .as_ref()
                .map(|c| ClientAuth::from_record(c, &d.server.issuer))
        })
    }

    /// The client identity for an authorization-code flow, in the specification's order.
    pub(super) async fn client_identity(
        &self,
        io: &Io,
        d: &Discovery,
        redirect_uri: &str,
        record: &mut Record,
    ) -> Result<ClientAuth> {
        let cfg = self.cfg();
        let issuer = &d.server.issuer;
        if self.configured_for(issuer) {
            return Ok(self.configured_client(&d.server));
        }
        if let Some(client) = self.cimd_client(&d.server) {
            return Ok(client);
        }
        if let Some(c) = &record.client {
            let expired = c.client_secret_expires_at.is_some_and(|t| t <= store::now_secs());
            if !expired && c.redirect_uris.iter().any(|r| flow::redirect_serves(r, redirect_uri)) {
                return Ok(ClientAuth::from_record(c, issuer));
            }
        }
        if d.server.meta.registration_endpoint.is_some() {
            let method = cfg
                .token_endpoint_auth_method
                .as_deref()
                .filter(|m| *m != "private_key_jwt");
            let client = flow::register(
                io,
                &d.server,
                &self.client_name,
                &cfg.application_type,
                redirect_uri,
                method,
            )
            .await?;
            record.client = Some(client.clone());
            self.save(issuer, record).await;
            return Ok(ClientAuth::from_record(&client, issuer));
        }
        Err(Error::auth(format!(
            "no client identity for the authorization server: no pre-registered credentials for it, \
             no Client ID Metadata Document support{}, no dynamic registration; configure oauth.client_id",
            if cfg.client_metadata_url.is_none() {
                " (oauth.client_metadata_url is not set)"
            } else {
                ""
            }
        )))
    }
}
